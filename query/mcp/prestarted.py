"""The ingest tool's next child, started before the call that needs it.

A cold `python -m flows.ingest` child spends ~5 s starting Python and importing Prefect and
the ingest stack before it reads a file, longer than the ingest of a few files takes. The
server keeps one `python -m flows.prestarted` process waiting (flows/prestarted.py): it has
done that start and reads its command on stdin. A call hands it the command it would have
started cold and reads it exactly as it would read a cold child (query/mcp/ingest.py). The
next one starts when that command has ended, not beside it: its imports are 3 s of CPU, which
on two cores slowed the command by as much as they saved (bench/mcp_ingest.py), and the tool
runs one ingest at a time anyway. A process is used for one command only.

It is used only when it was started with the environment the command would get (the store's
password included, Prefect's API address too: a process reads Prefect's settings when it
imports Prefect); otherwise, or when it died, the call starts its child cold, as before.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable

import anyio
from anyio.abc import Process

from core.own_command import python_module
from query.mcp.children import end_child

PRESTARTED = "flows.prestarted"


class PrestartedChild:
    """At most one waiting `python -m flows.prestarted`, for the lifetime of `run`."""

    def __init__(
        self, environment: Callable[[], dict[str, str] | None], log: Callable[[str], None]
    ) -> None:
        # The environment a command would get now (None: the server's own), asked when a
        # process starts: Prefect's API address joins the server's environment after start.
        self._environment = environment
        self._log = log
        self._waiting: Process | None = None
        self._taken: Process | None = None  # the last one handed a command
        self._started_with: dict[str, str] = {}
        self._wanted = anyio.Event()

    @property
    def waiting_pid(self) -> int | None:
        """The pid of the process waiting for a command, if one is."""
        return self._waiting.pid if self._waiting is not None else None

    async def run(self, after: anyio.Event | None = None) -> None:
        """Keep one process waiting until cancelled; the first once `after` is set (Prefect's
        API is known, so the process imports Prefect with its address)."""
        if after is not None:
            await after.wait()
        try:
            while True:
                if self._waiting is None:
                    if self._taken is not None:
                        await self._taken.wait()
                        self._taken = None
                    await self._start()
                await self._wanted.wait()
                self._wanted = anyio.Event()
        finally:
            with anyio.CancelScope(shield=True):
                await self._discard()

    async def take(
        self, module: str, argv: list[str], env: dict[str, str] | None
    ) -> Process | None:
        """The waiting process, running `module` with `argv`; None when there is none that
        was started with `env` (then the caller starts the command cold)."""
        process, self._waiting = self._waiting, None
        try:
            if process is None:
                return None
            if process.returncode is not None:
                self._log(
                    f"mcp: the ingest child started ahead of time had exited with status "
                    f"{process.returncode}; this call starts its own"
                )
                await end_child(process)
                return None
            if self._started_with != _effective(env):
                await end_child(process)
                return None
            request = json.dumps({"module": module, "argv": argv}) + "\n"
            try:
                assert process.stdin is not None
                await process.stdin.send(request.encode())
                await process.stdin.aclose()
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                await end_child(process)  # it died waiting: start the command cold
                return None
            self._taken = process
            return process
        finally:
            self._wanted.set()  # the next one, once this command has ended

    async def _start(self) -> None:
        env = self._environment()
        try:
            self._waiting = await anyio.open_process(
                python_module(PRESTARTED),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
            )
            self._started_with = _effective(env)
        except OSError as exc:
            self._log(f"mcp: could not start the next ingest child ahead of time: {exc}")

    async def _discard(self) -> None:
        process, self._waiting = self._waiting, None
        if process is not None:
            await end_child(process)


def _effective(env: dict[str, str] | None) -> dict[str, str]:
    return dict(os.environ) if env is None else dict(env)
