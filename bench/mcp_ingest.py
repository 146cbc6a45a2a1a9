"""The MCP `ingest` tool on three files: how long a call takes to return with the files
keyword-searchable, through the MCP SDK's own client (stdio, as an agent's host runs it).

    .venv/bin/python bench/mcp_ingest.py [--rounds 3] [--settle 40] [--prestart on,off]
                                         [--json]

One `python -m query mcp --allow-ingest DIR` server per `--prestart` setting
(RAG_MCP_PRESTART: `on`, the next ingest child started ahead of the call; `off`, every child
started cold), each in a scratch data dir with its own Prefect home and no configured
PREFECT_API_URL, so each server starts the Prefect API its ingest children share
(query/mcp/prefect_api.py). The servers run side by side, idle but for the call being timed.
After `--settle` seconds (that API's start on a fresh Prefect home), each round, server by
server, copies data/sample/guides (three Markdown files) to a new folder and times `ingest`
on it into a new index, then asks `retrieve` a question only those files answer, and checks
the answer names one of them; the next call starts once the server's background embedding
of that index has ended.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

ROOT = Path(__file__).resolve().parents[1]
GUIDES = ROOT / "data" / "sample" / "guides"
QUESTION = "migration plan for a SwiftData schema"


PRESTART = {"on": "true", "off": "false"}


def environment(work: Path, prestart: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAG_", "PREFECT_API"))}
    env.update(
        HF_HUB_OFFLINE="1",
        RAG_DATA_DIR=str(work / "data"),
        RAG_INDEX_DIR=str(work / "store"),
        RAG_STAGING_DIR=str(work / "staging"),
        RAG_MCP_PRESTART=PRESTART[prestart],
        PREFECT_HOME=str(work / "prefect-home"),
    )
    return env


def server(work: Path, prestart: str) -> StdioServerParameters:
    (work / "projects").mkdir(parents=True)
    (work / "store").mkdir()
    return StdioServerParameters(
        command=sys.executable,
        args=["-P", "-m", "query", "mcp", "--store", str(work / "store"),
              "--allow-ingest", str(work / "projects")],
        env=environment(work, prestart),
        cwd=str(work),
    )  # fmt: skip


async def rounds(work: Path, count: int, settle: float, modes: list[str]) -> list[dict[str, Any]]:
    out = []
    async with AsyncExitStack() as stack:
        clients = {}
        for mode in modes:
            params = server(work / mode, mode)
            errlog = stack.enter_context((work / mode / "server.log").open("a"))
            clients[mode] = await stack.enter_async_context(
                Client(stdio_client(params, errlog=errlog))
            )
        await anyio.sleep(settle)
        for n in range(count):
            for mode, client in clients.items():
                out.append(await one_round(client, work / mode / "projects", n, mode))
    return out


async def one_round(client: Client, projects: Path, n: int, mode: str) -> dict[str, Any]:
    folder = projects / f"guides-{n}"
    shutil.copytree(GUIDES, folder)
    started = time.monotonic()
    result = await client.call_tool("ingest", {"paths": [str(folder)], "index": f"g{n}"})
    seconds = time.monotonic() - started
    found = await client.call_tool("retrieve", {"query": QUESTION, "indexes": [f"g{n}"]})
    chunks = (found.structured_content or {}).get("chunks", [])
    ingested = result.structured_content or {}
    row = {
        "round": n + 1,
        "prestart": mode,
        "ingest_s": round(seconds, 2),
        "chunks_written": ingested["summary"]["chunks_written"],
        "answered_from_the_new_files": bool(chunks) and (folder / str(chunks[0]["path"])).is_file(),
        "phases": ingested.get("phases", {}),
        "load": [round(x, 2) for x in os.getloadavg()],
    }
    print(json.dumps(row), file=sys.stderr, flush=True)
    # The round's vectors are embedded in the background: the next call waits, so that each
    # call is timed on a machine doing nothing else of ours.
    while (await client.call_tool("index_status", {})).structured_content["embedding"]:
        await anyio.sleep(0.5)
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--settle", type=float, default=40.0, help="seconds before round 1")
    parser.add_argument("--prestart", default="on,off", help="comma-separated: on, off")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    modes = [m.strip() for m in args.prestart.split(",") if m.strip()]
    if not modes or any(m not in PRESTART for m in modes):
        parser.error("--prestart takes on, off or both")
    work = Path(tempfile.mkdtemp(prefix="mcp-ingest-"))
    try:
        results = anyio.run(rounds, work, args.rounds, args.settle, modes)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "command": " ".join(["python", "bench/mcp_ingest.py", *sys.argv[1:]]),
        "rounds": results,
    }
    print(json.dumps(report, indent=2) if args.json else report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
