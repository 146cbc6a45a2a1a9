"""`python -m query mcp --watch DIR`: the server follows a codebase while it serves. An added
function is retrievable through the server within seconds, with only it embedded; a deleted
file's chunks are gone within seconds; index_status says what the watcher did; the watcher
stops with the server. The restart rule is checked on small real child processes."""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import psutil
import pytest
from mcp import Client

from query.cli.main import main as query_cli
from query.mcp.watch import Watcher, WatchStatus
from tests.query.test_mcp_server import server_env, stdio_transport
from tests.support.ops import shared_server
from tests.support.query import FIXTURES

INDEX = "mcp-watched"
DEADLINE_S = 10.0  # from a file's change to its retrieval (the acceptance)
START_S = 300.0  # the model and the first ingest, on a busy box
NEW_FUNCTION = """
/// Archives finished trips into one file the user can share.
func archiveFinishedTrips(_ trips: [Trip]) -> URL {
    URL(fileURLWithPath: "trips.zip")
}
"""
QUERY = "archive finished trips into a file to share"


async def poll(check, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while True:
        result = await check()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout:.0f}s: {what}")
        await anyio.sleep(0.1)


def watcher_processes(code: Path) -> list[str]:
    """Command lines of live `flows.ingest --watch` processes following `code`."""
    found = []
    for process in psutil.process_iter(["cmdline"]):
        line = " ".join(process.info["cmdline"] or ())
        if "flows.ingest" in line and "--watch" in line and str(code) in line:
            found.append(line)
    return found


async def follow_edits(client: Client, code: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}

    async def status() -> dict[str, Any]:
        result = await client.call_tool("index_status", {"index": INDEX})
        return {} if result.is_error else result.structured_content["watch"]

    async def watch_runs(count: int) -> dict[str, Any] | None:
        watch = await status()
        return watch if watch.get("runs", 0) >= count else None

    async def paths_for(query: str) -> list[str]:
        result = await client.call_tool("retrieve", {"query": query, "top_k": 5})
        assert not result.is_error, result.content
        return [c["path"] for c in result.structured_content["chunks"]]

    async def found() -> list[dict[str, Any]]:
        result = await client.call_tool("retrieve", {"query": QUERY, "top_k": 5})
        chunks = result.structured_content["chunks"]
        return [c for c in chunks if "archiveFinishedTrips" in c["content"]]

    out["first"] = await poll(lambda: watch_runs(1), START_S, "the first watch run")
    out["before"] = await found()
    with (code / "TripStore.swift").open("a") as handle:
        handle.write(NEW_FUNCTION)
    out["found"] = await poll(found, DEADLINE_S, "the added function retrievable")
    out["edit"] = await poll(lambda: watch_runs(2), 30, "the edit's run")
    (code / "Trip+Duration.swift").unlink()

    async def gone() -> bool:
        return "Trip+Duration.swift" not in await paths_for("how many nights does a trip last")

    await poll(gone, DEADLINE_S, "the deleted file's chunks gone")
    out["deletion"] = await poll(lambda: watch_runs(3), 30, "the deletion's run")
    out["during"] = watcher_processes(code)
    return out


@pytest.mark.slow
def test_a_served_codebase_follows_its_edits(tmp_path: Path, pytestconfig):
    code = tmp_path / "code"
    shutil.copytree(FIXTURES / "app", code)
    (tmp_path / "store").mkdir()
    env = {**server_env(tmp_path), **shared_server(pytestconfig).env()}
    args = ["--store", str(tmp_path / "store"), "--index", INDEX, "--watch", str(code)]

    async def session() -> dict[str, Any]:
        async with Client(stdio_transport(args, tmp_path, env)) as client:
            return await follow_edits(client, code)

    out = anyio.run(session)
    log = (tmp_path / "server.log").read_text()

    first, edit, deletion = out["first"], out["edit"], out["deletion"]
    assert first["paths"] == [str(code)] and first["index"] == INDEX
    assert first["running"] and first["starts"] == 1 and first["failed_runs"] == 0
    assert first["last_run"]["docs_new"] == 2
    assert out["before"] == [] and out["found"][0]["path"] == "TripStore.swift"
    # Only the added function reached the model.
    assert edit["last_run"]["docs_changed"] == 1 and edit["last_run"]["chunks_embedded"] == 1
    assert deletion["last_run"]["docs_deleted"] == 1
    assert deletion["last_run"]["chunks_embedded"] == 0
    assert len(out["during"]) == 1
    # The server's end is the watcher's.
    deadline = time.monotonic() + 60
    while watcher_processes(code) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert watcher_processes(code) == []
    assert "watch: run 2 (1 changed path): 0 new, 1 changed" in log
    assert "Traceback" not in log


def test_watch_needs_an_existing_directory(tmp_path: Path, capsys):
    missing = tmp_path / "nowhere"
    assert query_cli(["mcp", "--store", str(tmp_path), "--watch", str(missing)]) == 2
    assert capsys.readouterr().err.strip() == f"error: --watch {missing}: not a directory"


# A watch child in core/ingest_lines.py's schema. Its stderr says something else than its
# error line, last: the watcher logs stderr and never reads it.
SCRIPT = """
import json, sys, time
print(json.dumps({"kind": "run", "run": 1, "docs_new": 1}), flush=True)
print("not json", flush=True)
print(json.dumps({"run": 9}), flush=True)  # an object, but not a line of the schema
print(json.dumps({"kind": "reject", "run": 2, "file": "a.jsonl", "line": 1}), flush=True)
print(json.dumps({"kind": "run", "run": 2, "error": "disk full"}), flush=True)
print(json.dumps({"kind": "error", "message": "the index is locked", "exit_code": 1}), flush=True)
time.sleep(0.3)
print("error: stderr prose, reworded at will", file=sys.stderr, flush=True)
sys.exit(int(sys.argv[1]))
"""


async def watch_for(watcher: Watcher, seconds: float) -> None:
    with anyio.move_on_after(seconds):
        await watcher.run()


def scripted(code: int, log: list[str], loads: list[int]) -> Watcher:
    async def on_run() -> None:
        loads.append(1)

    status = WatchStatus(paths=["/code"], index="app")
    return Watcher([sys.executable, "-c", SCRIPT, str(code)], status, on_run, log.append)


def test_a_watcher_that_dies_is_started_again_and_its_runs_counted():
    log: list[str] = []
    loads: list[int] = []
    watcher = scripted(1, log, loads)
    anyio.run(watch_for, watcher, 2.5)

    status = watcher.status
    assert status.starts == 2  # at once, then after a pause of one second
    assert (status.runs, status.failed_runs) == (4, 2) and len(loads) == 4
    assert status.last_run == {"run": 2, "error": "disk full"}
    assert status.last_error == "the index is locked" and not status.running
    assert status.stopped is None
    assert "watch: the watcher exited with status 1; starting it in 1 s" in log
    assert "watch: error: stderr prose, reworded at will" in log  # relayed, not read


def test_a_watcher_that_refuses_its_arguments_is_not_started_again():
    log: list[str] = []
    watcher = scripted(2, log, [])
    anyio.run(watch_for, watcher, 5)

    assert watcher.status.starts == 1
    assert watcher.status.stopped == "the watcher refused its arguments: the index is locked"
    assert log[-1].startswith("watch: stopped for good")
