"""The MCP path of bench/query.py: `python -m query mcp --http` on the built index, its
`retrieve` tool called through the MCP SDK's own client (one session, one call at a time,
as an agent's host keeps one), each call alternating with the same request POSTed to the
worker routes the same process serves, so that both round trips see the same engine, the
same load on the machine and the same request (the tool's: the pipeline's defaults)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

from bench.round_trips import free_port, post_json, sample_of, summarise, wait_healthy
from core.progress import Progress

ROOT = Path(__file__).resolve().parents[1]


def through_mcp(
    store_dir: Path, texts: list[str], log, *, index: str, warmup: int, corag: bool = False
) -> dict[str, dict[str, Any]]:
    """{"mcp": round trips, "worker_beside_mcp": the worker routes' stages and round trips}."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-m", "query", "mcp", "--http", "--port", str(port)]
    server = subprocess.Popen(
        [*command, "--store", str(store_dir), "--index", index],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_healthy(url, server)
        calls = [{"query": t, "top_k": 10, "use_corag": corag} for t in texts]
        progress = Progress(len(texts), "MCP and worker routes", log=log, unit="queries")
        mcp, worker = anyio.run(_alternate, url, calls, index, progress)
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
    return {"mcp": summarise(mcp[warmup:]), "worker_beside_mcp": summarise(worker[warmup:])}


async def _alternate(url: str, calls: list[dict[str, Any]], index: str, progress: Progress):
    mcp, worker = [], []
    async with Client(f"{url}/mcp") as client:
        for arguments in calls:
            started = time.perf_counter()
            result = await client.call_tool("retrieve", arguments)
            mcp.append({"round_trip": (time.perf_counter() - started) * 1000.0})
            if result.is_error or not (result.structured_content or {}).get("chunks"):
                raise RuntimeError(f"MCP retrieve {arguments['query']!r}: {result.content}")
            # The worker path's own client (one call at a time: blocking the loop is harmless).
            body = {
                "query": arguments["query"],
                "top_k": arguments["top_k"],
                "corag": arguments["use_corag"],
                "indexes": [index],
            }
            status, elapsed, payload = post_json(url, body)
            if status != 200 or payload is None or not payload["chunks"]:
                raise RuntimeError(f"worker routes: {status} for {body['query']!r}: {payload}")
            worker.append({**sample_of(payload["timings_ms"]), "round_trip": elapsed})
            progress.advance()
    progress.done()
    return mcp, worker
