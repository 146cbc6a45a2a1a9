"""The ingest tool's next child is started before the call that needs it
(query/mcp/prestarted.py): a call hands its command to that process when it was started with
the command's environment and is still alive, and starts the command cold otherwise; the
next one starts once the command has ended, and the waiting one ends with the server."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable

import anyio
import psutil

from query.mcp.ingest import IngestCommand, run_child
from query.mcp.prestarted import PrestartedChild

HELP = IngestCommand("flows.ingest", ["--help"])
WAIT_S = 120


async def waiting(child: PrestartedChild, other_than: int | None = None) -> int:
    with anyio.fail_after(WAIT_S):
        while child.waiting_pid is None or child.waiting_pid == other_than:
            await anyio.sleep(0.05)
    return child.waiting_pid


def serving(child: PrestartedChild, body: Callable[[PrestartedChild], Awaitable[dict]]) -> dict:
    async def main() -> dict:
        async with anyio.create_task_group() as group:
            group.start_soon(child.run)
            out = await body(child)
            group.cancel_scope.cancel()
        return out

    return anyio.run(main)


def own_environment() -> dict[str, str] | None:
    return None


def test_a_command_runs_in_the_process_started_before_it():
    async def body(child: PrestartedChild) -> dict:
        before = await waiting(child)
        taken = await child.take(HELP.module, HELP.args, HELP.env)
        assert taken is not None
        code = await taken.wait()
        return {"before": before, "taken": taken.pid, "code": code}

    out = serving(PrestartedChild(own_environment, print), body)

    assert out["taken"] == out["before"] and out["code"] == 0


def test_the_command_reads_as_a_cold_child_reads():
    async def body(child: PrestartedChild) -> dict:
        await waiting(child)
        warm = await run_child(HELP, child)
        cold = await run_child(HELP)
        return {"warm": warm, "cold": cold}

    out = serving(PrestartedChild(own_environment, print), body)

    assert out["warm"][0] == out["cold"][0] == 0
    assert out["warm"][1] == out["cold"][1] and out["warm"][1].startswith(b"usage: ")


def test_the_next_process_starts_once_the_command_has_ended():
    async def body(child: PrestartedChild) -> dict:
        first = await waiting(child)
        stopped = psutil.Process(first)
        stopped.suspend()  # the command cannot end until it is resumed
        taken = await child.take(HELP.module, HELP.args, HELP.env)
        assert taken is not None
        await anyio.sleep(1.0)
        during = child.waiting_pid
        stopped.resume()
        await taken.wait()
        return {"during": during, "next": await waiting(child, other_than=first), "first": first}

    out = serving(PrestartedChild(own_environment, print), body)

    assert out["during"] is None and out["next"] != out["first"]


def test_a_command_for_another_environment_starts_cold_and_the_waiting_process_ends():
    async def body(child: PrestartedChild) -> dict:
        pid = await waiting(child)
        taken = await child.take(HELP.module, HELP.args, {**os.environ, "RAG_OTHER": "1"})
        return {"taken": taken, "alive": _running(pid)}

    out = serving(PrestartedChild(own_environment, print), body)

    assert out["taken"] is None and not out["alive"]


def test_a_process_that_died_waiting_leaves_the_command_to_a_cold_child_and_says_so():
    said: list[str] = []

    async def body(child: PrestartedChild) -> dict:
        psutil.Process(await waiting(child)).kill()
        await anyio.sleep(0.5)
        return {"taken": await child.take(HELP.module, HELP.args, HELP.env)}

    assert serving(PrestartedChild(own_environment, said.append), body)["taken"] is None
    assert any("had exited" in line and "this call starts its own" in line for line in said)


def test_the_waiting_process_ends_with_the_server():
    async def body(child: PrestartedChild) -> dict:
        return {"pid": await waiting(child)}

    pid = serving(PrestartedChild(own_environment, print), body)["pid"]

    assert not _running(pid)


def _running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
