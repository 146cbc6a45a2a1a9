"""The MCP server's `ingest` tool: `python -m flows.ingest --lock --json` as a child process.

A child process, not a call: the query side never imports ingestion (.importlinter), the
ingest CLI is the one entry every manual run goes through (preflight, Prefect's API server,
the flow and its artifact), and Prefect's and the model's console output stays out of the
MCP server's stdout, which carries the protocol in stdio mode. `--lock` holds the index's
write slot, the Prefect concurrency limit the refresh, backfill and reverify runs hold.

The tool reads the child's JSON lines on stdout (`--json`, core/ingest_lines.py's schema):
its rejects, its summary, its error. The child's stderr is prose for people and is never
read, so rewording a message cannot change what the tool returns.
"""

from __future__ import annotations

import subprocess
from typing import Any

import anyio
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field

from core.ingest_lines import ERROR, KIND, REJECT, SUMMARY, parse, where
from core.own_command import python_module


class IngestResult(BaseModel):
    index: str = Field(description="The index written.")
    store: str = Field(description="The store that holds it.")
    summary: dict[str, int | float] = Field(
        description="docs_seen, docs_new, docs_changed, docs_unchanged, docs_deleted, "
        "docs_rejected, chunks_written, chunks_deleted, chunks_embedded, "
        "embedding_cache_hits, seconds"
    )
    breakdowns: dict[str, dict[str, int]] = Field(
        default_factory=dict,
        description="chunks_by_language (chunks written per language) and skipped_by_type "
        "(files not read, per extension or lock-file name)",
    )
    rejected: list[str] = Field(description="Each rejected record: file:line: reason.")


def ingest_command(paths: list[str], index: str, store: str, mode: str = "--lock") -> list[str]:
    """`python -m flows.ingest` on `paths` into `index` of `store`, reporting in JSON lines on
    stdout; `mode` is --lock (one run under the index's write slot) or --watch."""
    target = ["--index", index, "--store", store]
    return python_module("flows.ingest", *paths, *target, mode, "--json")


async def run_ingest_cli(paths: list[str], index: str, store: str) -> IngestResult:
    """Run the ingest CLI; its summary, or a ToolError with the CLI's own error message."""
    # `--` would be safer for paths starting with "-", but argparse then takes the options
    # after it as paths too; such paths are refused instead.
    dashed = [p for p in paths if p.startswith("-")]
    if dashed:
        raise ToolError(f"paths must not start with '-': {', '.join(dashed)}")
    # stdin: never the server's, which carries the protocol in stdio mode.
    done = await anyio.run_process(
        ingest_command(paths, index, store),
        stdin=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    lines = [parse(text) for text in done.stdout.decode("utf-8", "replace").splitlines()]
    records = [record for record in lines if record is not None]
    summary = next((r for r in reversed(records) if r[KIND] == SUMMARY), None)
    # Exit 1 with a summary: some records were rejected, the rest is written.
    if summary is None or done.returncode not in (0, 1):
        raise ToolError(_error_message(records, done.returncode))
    rejected = [f"{where(r)}: {r['reason']}" for r in records if r[KIND] == REJECT]
    # The summary line holds the counts, then breakdowns by name (objects).
    fields = {k: v for k, v in summary.items() if k != KIND}
    counts = {k: v for k, v in fields.items() if not isinstance(v, dict)}
    breakdowns = {k: v for k, v in fields.items() if isinstance(v, dict)}
    return IngestResult(
        index=index, store=store, summary=counts, breakdowns=breakdowns, rejected=rejected
    )


def _error_message(records: list[dict[str, Any]], code: int) -> str:
    errors = [str(r["message"]) for r in records if r[KIND] == ERROR]
    if errors:
        return errors[-1]
    # Killed, or dead before its first line: nothing of its own to say.
    return f"python -m flows.ingest exited with status {code} without a result"
