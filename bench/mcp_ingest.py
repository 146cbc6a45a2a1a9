"""The MCP `ingest` tool on three files: how long a call takes to return with the files
keyword-searchable, through the MCP SDK's own client (stdio, as an agent's host runs it).

    .venv/bin/python bench/mcp_ingest.py [--rounds 3] [--settle 40] [--json]

One `python -m query mcp --allow-ingest DIR` server in a scratch data dir, its own Prefect
home and no configured PREFECT_API_URL, so the server starts the Prefect API its ingest
children share (query/mcp/prefect_api.py). After `--settle` seconds (that API's start on a
fresh Prefect home), each round copies data/sample/guides (three Markdown files) to a new
folder and times `ingest` on it into a new index, then asks `retrieve` a question only those
files answer, and checks the answer names one of them; the next round starts once the
server's background embedding of that index has ended.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

ROOT = Path(__file__).resolve().parents[1]
GUIDES = ROOT / "data" / "sample" / "guides"
QUESTION = "migration plan for a SwiftData schema"


def environment(work: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAG_", "PREFECT_API"))}
    env.update(
        HF_HUB_OFFLINE="1",
        RAG_DATA_DIR=str(work / "data"),
        RAG_INDEX_DIR=str(work / "store"),
        RAG_STAGING_DIR=str(work / "staging"),
        PREFECT_HOME=str(work / "prefect-home"),
    )
    return env


async def rounds(work: Path, count: int, settle: float) -> list[dict[str, Any]]:
    projects = work / "projects"
    projects.mkdir()
    (work / "store").mkdir()
    params = StdioServerParameters(
        command=sys.executable,
        args=["-P", "-m", "query", "mcp", "--store", str(work / "store"),
              "--allow-ingest", str(projects)],
        env=environment(work),
        cwd=str(work),
    )  # fmt: skip
    out = []
    async with Client(stdio_client(params, errlog=(work / "server.log").open("a"))) as client:
        await anyio.sleep(settle)
        for n in range(count):
            folder = projects / f"guides-{n}"
            shutil.copytree(GUIDES, folder)
            started = time.monotonic()
            result = await client.call_tool("ingest", {"paths": [str(folder)], "index": f"g{n}"})
            seconds = time.monotonic() - started
            found = await client.call_tool("retrieve", {"query": QUESTION, "indexes": [f"g{n}"]})
            chunks = (found.structured_content or {}).get("chunks", [])
            phases = (result.structured_content or {}).get("phases", {})
            out.append(
                {
                    "round": n + 1,
                    "ingest_s": round(seconds, 2),
                    "chunks_written": (result.structured_content or {})["summary"][
                        "chunks_written"
                    ],
                    "answered_from_the_new_files": bool(chunks)
                    and (folder / str(chunks[0]["path"])).is_file(),
                    "phases": phases,
                    "load": [round(x, 2) for x in os.getloadavg()],
                }
            )
            print(json.dumps(out[-1]), file=sys.stderr, flush=True)
            # The round's vectors are embedded in the background: the next round waits, so
            # that each call is timed on a machine doing nothing else of ours.
            while (await client.call_tool("index_status", {})).structured_content["embedding"]:
                await anyio.sleep(0.5)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--settle", type=float, default=40.0, help="seconds before round 1")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="mcp-ingest-"))
    try:
        results = anyio.run(rounds, work, args.rounds, args.settle)
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
