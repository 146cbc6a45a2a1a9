"""The MCP server's `ingest` tool: `python -m flows.ingest --lock --json` as a child process
(one started ahead of the call when there is one: query/mcp/prestarted.py).

A child process, not a call: the query side never imports ingestion (.importlinter), the
ingest CLI is the one entry every manual run goes through (preflight, Prefect's API server,
the flow and its artifact), and Prefect's and the model's console output stays out of the
MCP server's stdout, which carries the protocol in stdio mode. `--lock` holds the index's
write slot, the Prefect concurrency limit the refresh, backfill and reverify runs hold.

The tool reads the child's JSON lines on stdout (`--json`, core/ingest_lines.py's schema):
its rejects, its summary, its error. The child's stderr is prose for people: only its tail
is kept, and it reaches the tool's error when the child failed other than on its arguments
(a crash, a store that would not open), so that the failure can be diagnosed; rewording a
message cannot change what the tool returns otherwise. A TiDB password reaches the child by
its environment, never its argv, and the result shows the store without it.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import ByteReceiveStream
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field

from chunkers.sources.secrets import redacted
from core.ingest_lines import BREAKDOWN_KEYS, ERROR, KIND, REJECT, SUMMARY, parse, where
from core.own_command import python_module
from core.settings import Settings
from core.store.location import StoreLocation
from query.mcp.prestarted import PrestartedChild

EXIT_USAGE = 2
STDERR_TAIL = 16_384  # bytes of the child's stderr kept
STDERR_LINES = 20  # of which the error shows the last lines
# The settings' name for the TiDB password, as the child reads it.
PASSWORD_VARIABLE = str(Settings.model_fields["tidb_password"].validation_alias)


class IngestResult(BaseModel):
    index: str = Field(description="The index written.")
    store: str = Field(description="The store that holds it (never with a password).")
    summary: dict[str, int | float] = Field(
        description="docs_seen, docs_new, docs_changed, docs_unchanged, docs_deleted, "
        "docs_rejected, chunks_written, chunks_deleted, chunks_embedded, "
        "embedding_cache_hits, chunks_pending (chunks still without a vector), "
        "vector_coverage (the share of the index's chunks with one), seconds"
    )
    embedding: str = Field(
        default="",
        description="What happens to the chunks still without vectors: retrieve finds them "
        "by keyword now, and a background run embeds them (index_status shows "
        "vector_coverage rising to 1).",
    )
    breakdowns: dict[str, dict[str, int]] = Field(
        default_factory=dict,
        description="chunks_by_language (chunks written per language) and skipped_by_type "
        "(files not read, per extension or lock-file name; credentials as 'credentials: NAME'; "
        "links leaving the allowed folders as 'outside root')",
    )
    rejected: list[str] = Field(description="Each rejected record: file:line: reason.")
    phases: dict[str, float | None] = Field(
        default_factory=dict,
        description="Where the ingest's seconds went (startup, lexical, prepare, api_wait, "
        "flow, total; searchable: when the files first answered keyword questions).",
    )


@dataclass(frozen=True)
class IngestCommand:
    """A child's command, `python -m MODULE ARGS...`, and its environment (None: the
    server's own). A TiDB password never goes in the arguments, which `ps` shows to every
    user of the machine."""

    module: str
    args: list[str]
    env: dict[str, str] | None = None

    @property
    def argv(self) -> list[str]:
        return python_module(self.module, *self.args)


def ingest_command(
    paths: list[str],
    index: str,
    store: str,
    mode: str = "--lock",
    within: Sequence[Path] = (),
    *,
    vectors_later: bool = False,
) -> IngestCommand:
    """`python -m flows.ingest` on `paths` into `index` of `store`, reporting in JSON lines on
    stdout; `mode` is --lock (one run under the index's write slot) or --watch. With
    `within` (the server's --allow-ingest roots), the child checks every file's real path
    against them again where it reads it: the server's check is earlier, and a link can be
    planted between the two. `vectors_later`: the child stops once the files are keyword-
    searchable (`embed_command` does the rest)."""
    location = StoreLocation.parse(store)
    confined = [arg for root in within for arg in ("--within", str(root))]
    target = ["--index", index, "--store", location.without_password, *confined]
    later = ["--vectors", "later"] if vectors_later else []
    args = [*paths, *target, *later, mode, "--json"]
    return IngestCommand("flows.ingest", args, child_environment(location))


def embed_command(index: str, store: str) -> IngestCommand:
    """`python -m flows.embed` on `index` of `store` under the index's write slot: the vector
    phase of an ingest that stopped once its files were keyword-searchable."""
    location = StoreLocation.parse(store)
    target = ["--index", index, "--store", location.without_password]
    return IngestCommand("flows.embed", [*target, "--lock", "--json"], child_environment(location))


def child_environment(location: StoreLocation) -> dict[str, str] | None:
    """The environment the store's children get: the server's own (None), or with the
    store's password added."""
    if location.password is None:
        return None
    # The child's whole environment must be given to add one variable to it.
    return {**os.environ, PASSWORD_VARIABLE: location.password}


async def run_ingest_cli(
    paths: list[str],
    index: str,
    store: str,
    within: Sequence[Path] = (),
    *,
    vectors_later: bool = False,
    prestarted: PrestartedChild | None = None,
) -> IngestResult:
    """Run the ingest CLI; its summary, or a ToolError with the CLI's own error message
    (and, when it failed other than on its arguments, the tail of its stderr)."""
    # `--` would be safer for paths starting with "-", but argparse then takes the options
    # after it as paths too; such paths are refused instead.
    dashed = [p for p in paths if p.startswith("-")]
    if dashed:
        raise ToolError(f"paths must not start with '-': {', '.join(dashed)}")
    command = ingest_command(paths, index, store, within=within, vectors_later=vectors_later)
    records, summary = await _summary_of(command, store, prestarted)
    rejected = [f"{where(r)}: {r['reason']}" for r in records if r[KIND] == REJECT]
    # The summary line holds the counts, then breakdowns by name (objects).
    fields = {k: v for k, v in summary.items() if k != KIND}
    counts = {k: v for k, v in fields.items() if not isinstance(v, dict)}
    breakdowns = {k: fields[k] for k in BREAKDOWN_KEYS if k in fields}
    return IngestResult(
        index=index,
        store=StoreLocation.parse(store).display,
        summary=counts,
        breakdowns=breakdowns,
        rejected=rejected,
        phases=fields.get("phases") or {},
    )


async def run_embed_cli(index: str, store: str) -> dict[str, Any]:
    """Run the embed CLI on `index`; its summary's counts, or a ToolError as for ingest.
    Started cold: it runs in the background, and loads a model anyway."""
    _, summary = await _summary_of(embed_command(index, store), store)
    return {k: v for k, v in summary.items() if k != KIND and not isinstance(v, dict)}


async def _summary_of(
    command: IngestCommand, store: str, prestarted: PrestartedChild | None = None
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """A child's JSON lines and its summary line; a ToolError when it has none, or exited
    other than 0 or 1 (1 with a summary: some records were rejected, the rest is written)."""
    code, stdout, stderr_tail = await run_child(command, prestarted)
    lines = [parse(text) for text in stdout.decode("utf-8", "replace").splitlines()]
    records = [record for record in lines if record is not None]
    summary = next((r for r in reversed(records) if r[KIND] == SUMMARY), None)
    if summary is None or code not in (0, 1):
        location = StoreLocation.parse(store)
        raise ToolError(_error_message(records, code, stderr_tail, location, command.module))
    return records, summary


async def run_child(
    command: IngestCommand, prestarted: PrestartedChild | None = None
) -> tuple[int, bytes, bytes]:
    """The child's exit status, its stdout, and the last STDERR_TAIL bytes of its stderr
    (read as it comes, so a chatty child costs no memory); the child is the `prestarted`
    one when it can take the command, else one started now."""
    stdout = bytearray()
    tail = bytearray()

    async def drain(stream: ByteReceiveStream, into: bytearray, keep: int | None) -> None:
        async for chunk in stream:
            into.extend(chunk)
            if keep is not None and len(into) > keep:
                del into[:-keep]

    process = None
    if prestarted is not None:
        process = await prestarted.take(command.module, command.args, command.env)
    if process is None:
        # stdin: never the server's, which carries the protocol in stdio mode.
        process = await anyio.open_process(
            command.argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=command.env,
        )
    async with process:
        assert process.stdout is not None and process.stderr is not None
        async with anyio.create_task_group() as group:
            group.start_soon(drain, process.stdout, stdout, None)
            group.start_soon(drain, process.stderr, tail, STDERR_TAIL)
        code = await process.wait()
    return code, bytes(stdout), bytes(tail)


def _error_message(
    records: list[dict[str, Any]],
    code: int,
    stderr_tail: bytes,
    store: StoreLocation,
    module: str = "flows.ingest",
) -> str:
    errors = [str(r["message"]) for r in records if r[KIND] == ERROR]
    # Killed, or dead before its first line: nothing of its own to say.
    message = errors[-1] if errors else f"python -m {module} exited with status {code}"
    if code == EXIT_USAGE and errors:
        return message  # its arguments: the message says all
    shown = _shown_tail(stderr_tail, store)
    if not shown:
        return message if errors else f"{message} without a result"
    return f"{message}\n--- the last lines the ingest wrote to stderr ---\n{shown}"


def _shown_tail(tail: bytes, store: StoreLocation) -> str:
    """The last STDERR_LINES lines of the child's stderr, with whatever looks like a
    credential blanked out: the store's password, private keys, access keys."""
    lines = tail.decode("utf-8", "replace").splitlines()[-STDERR_LINES:]
    text = redacted("\n".join(lines))
    if store.password:
        text = text.replace(store.password, "***")
    return text.strip()
