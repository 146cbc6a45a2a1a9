"""The MCP server's `--watch DIR`: `python -P -m flows.ingest DIR... --watch --json`, a child.

A child process for the reasons the ingest tool is one (query.mcp.ingest): the query side
never imports ingestion, the watcher needs Prefect's API for the index's write slot, and its
console output must stay off stdout, which carries the protocol in stdio mode. Each run the
child reports (a `"run"` JSON line, core/ingest_lines.py's schema) warms the engine on the
index's new generation, so the next retrieve sees the edit; its `"error"` line is the
watch's last error. The child's stderr lines become the server's log lines, unread.

A watcher that dies is started again after a pause that doubles up to a minute (a run
that fails inside a live watcher is the child's to survive); one that refuses its arguments
(exit 2) is not, since it would refuse them again.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any

import anyio
from anyio.abc import ByteReceiveStream, Process
from anyio.streams.buffered import BufferedByteReceiveStream

from core.ingest_lines import ERROR, KIND, RUN, parse
from query.mcp.ingest import ingest_command

EXIT_USAGE = 2
# SIGTERM lets the child finish the run under way (its batches are atomic either way).
STOP_GRACE_S = 30.0
FIRST_PAUSE_S = 1.0
LONGEST_PAUSE_S = 60.0
MAX_LINE = 1 << 20


@dataclass
class WatchStatus:
    """What index_status reports about the watch: is it live, and what did it last do."""

    paths: list[str]
    index: str
    running: bool = False
    starts: int = 0
    runs: int = 0
    failed_runs: int = 0
    last_run: dict[str, Any] | None = None
    last_run_at: str | None = None
    last_error: str | None = None
    stopped: str | None = None  # why the watch ended for good

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Watcher:
    """Keeps one watch child (`ingest_command(..., "--watch")`) alive for the server's lifetime."""

    command: list[str]
    status: WatchStatus
    on_run: Callable[[], Awaitable[None]]
    log: Callable[[str], None]
    env: dict[str, str] | None = None  # the child's environment (a TiDB password); None: ours

    @classmethod
    def for_index(
        cls,
        paths: list[str],
        index: str,
        store: str,
        on_run: Callable[[], Awaitable[None]],
        log: Callable[[str], None],
    ) -> Watcher:
        status = WatchStatus(paths=list(paths), index=index)
        command = ingest_command(paths, index, store, "--watch")
        return cls(command.argv, status, on_run, log, command.env)

    async def run(self) -> None:
        """Until cancelled: run the child, and start it again when it exits."""
        pause = FIRST_PAUSE_S
        while True:
            started = time.monotonic()
            code = await self._run_child()
            if code == EXIT_USAGE:
                self.status.stopped = f"the watcher refused its arguments: {self.status.last_error}"
                self.log(f"watch: stopped for good; {self.status.stopped}")
                return
            # A child that lived a while before dying is not in a crash loop.
            if time.monotonic() - started > LONGEST_PAUSE_S:
                pause = FIRST_PAUSE_S
            self.log(f"watch: the watcher exited with status {code}; starting it in {pause:.0f} s")
            await anyio.sleep(pause)
            pause = min(pause * 2, LONGEST_PAUSE_S)

    async def _run_child(self) -> int:
        command = self.command
        # stdin: never the server's, which carries the protocol in stdio mode.
        process = await anyio.open_process(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=self.env,
        )
        self.status.starts += 1
        self.status.running = True
        try:
            assert process.stdout is not None and process.stderr is not None
            async with anyio.create_task_group() as group:
                group.start_soon(self._relay_stderr, process.stderr)
                await self._follow_runs(process.stdout)
            return await process.wait()
        finally:
            self.status.running = False
            with anyio.CancelScope(shield=True):
                await _stop(process)

    async def _follow_runs(self, stdout: ByteReceiveStream) -> None:
        async for line in _lines(stdout):
            record = parse(line)  # None: a library's print
            if record is not None and record[KIND] == ERROR:
                self.status.last_error = str(record["message"])
            if record is None or record[KIND] != RUN:
                continue  # also rejects (counted in their run) and a stopping watch's totals
            record = {k: v for k, v in record.items() if k != KIND}
            self.status.runs += 1
            self.status.last_run = record
            self.status.last_run_at = datetime.now(UTC).isoformat(timespec="seconds")
            if "error" in record:
                self.status.failed_runs += 1
                self.status.last_error = str(record["error"])
            try:
                await self.on_run()
            except Exception as exc:  # the next query loads what it needs itself
                self.log(f"watch: loading the new generation failed: {exc}")

    async def _relay_stderr(self, stderr: ByteReceiveStream) -> None:
        async for line in _lines(stderr):
            self.log(f"watch: {line}")


async def _lines(stream: ByteReceiveStream) -> AsyncIterator[str]:
    buffered = BufferedByteReceiveStream(stream)
    while True:
        try:
            raw = await buffered.receive_until(b"\n", MAX_LINE)
        except (anyio.EndOfStream, anyio.IncompleteRead):
            return
        except anyio.DelimiterNotFound:
            # An over-long line is dropped in pieces, not fatal.
            await buffered.receive(MAX_LINE)
            continue
        yield raw.decode("utf-8", "replace").rstrip("\r")


async def _stop(process: Process) -> None:
    if process.returncode is None:
        process.terminate()
        with anyio.move_on_after(STOP_GRACE_S):
            await process.wait()
    if process.returncode is None:
        process.kill()
        await process.wait()
    await process.aclose()
