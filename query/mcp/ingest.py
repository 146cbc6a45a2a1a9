"""The MCP server's `ingest` tool: `python -m flows.ingest --lock --json` as a child process.

A child process, not a call: the query side never imports ingestion (.importlinter), the
ingest CLI is the one entry every manual run goes through (preflight, Prefect's API server,
the flow and its artifact), and Prefect's and the model's console output stays out of the
MCP server's stdout, which carries the protocol in stdio mode. `--lock` holds the index's
write slot, the Prefect concurrency limit the refresh, backfill and reverify runs hold.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import anyio
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field


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
    """`python -m flows.ingest` on `paths` into `index` of `store`, with one JSON summary line
    per run on stdout; `mode` is --lock (one run under the index's write slot) or --watch."""
    target = ["--index", index, "--store", store]
    return [sys.executable, "-m", "flows.ingest", *paths, *target, mode, "--json"]


async def run_ingest_cli(paths: list[str], index: str, store: str) -> IngestResult:
    """Run the ingest CLI; its summary, or a ToolError with the CLI's own error line."""
    # `--` would be safer for paths starting with "-", but argparse then takes the options
    # after it as paths too; such paths are refused instead.
    dashed = [p for p in paths if p.startswith("-")]
    if dashed:
        raise ToolError(f"paths must not start with '-': {', '.join(dashed)}")
    # stdin: never the server's, which carries the protocol in stdio mode.
    done = await anyio.run_process(
        ingest_command(paths, index, store), stdin=subprocess.DEVNULL, check=False
    )
    out = done.stdout.decode("utf-8", "replace").strip().splitlines()
    err = done.stderr.decode("utf-8", "replace").strip().splitlines()
    summary = _summary(out[-1]) if out else None
    # Exit 1 with a summary: some records were rejected, the rest is written.
    if summary is None or done.returncode not in (0, 1):
        raise ToolError(_error_line(err, done.returncode))
    rejected = [line.removeprefix("rejected: ") for line in err if line.startswith("rejected: ")]
    # The summary line holds the counts, then breakdowns by name (objects).
    counts = {k: v for k, v in summary.items() if not isinstance(v, dict)}
    breakdowns = {k: v for k, v in summary.items() if isinstance(v, dict)}
    return IngestResult(
        index=index, store=store, summary=counts, breakdowns=breakdowns, rejected=rejected
    )


def _summary(line: str) -> dict[str, Any] | None:
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _error_line(stderr: list[str], code: int) -> str:
    errors = [line.removeprefix("error: ") for line in stderr if line.startswith("error: ")]
    if errors:
        return errors[-1]
    # argparse's usage errors and tracebacks end with their message.
    return stderr[-1] if stderr else f"python -m flows.ingest exited with status {code}"
