"""What the query benches share: per-stage samples and their p50/p95, and HTTP round trips
to a worker's POST /retrieve (bench/query.py's worker path, bench/query_mcp.py's worker
routes beside MCP)."""

from __future__ import annotations

import json
import socket
import statistics
import subprocess
import time
import urllib.error
import urllib.request
from typing import Any

STAGES = ("embed", "vector", "bm25", "fuse", "links", "corag", "pack", "total")


def summarise(samples: list[dict[str, float]]) -> dict[str, dict[str, float]]:
    out = {}
    keys = [*STAGES, "retrieval+fusion", "round_trip"]
    for key in keys:
        values = sorted(s[key] for s in samples if key in s)
        if values:
            out[key] = {"p50": round(statistics.median(values), 2), "p95": round(p95(values), 2)}
    return out


def p95(values: list[float]) -> float:
    return values[min(len(values) - 1, max(0, round(0.95 * len(values)) - 1))]


def sample_of(timings: dict[str, float]) -> dict[str, float]:
    sample = {k: float(timings.get(k, 0.0)) for k in STAGES}
    sample["retrieval+fusion"] = sample["vector"] + sample["bm25"] + sample["fuse"]
    return sample


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def post_json(url: str, fields: dict[str, Any]) -> tuple[int, float, dict[str, Any] | None]:
    body = json.dumps(fields).encode()
    req = urllib.request.Request(
        url + "/retrieve", data=body, headers={"Content-Type": "application/json"}
    )
    started = time.perf_counter()
    try:
        with urllib.request.urlopen(req, timeout=120) as resp:
            payload, status = json.loads(resp.read()), resp.status
    except urllib.error.HTTPError as exc:
        payload, status = None, exc.code
    except OSError:  # a reset or refused connection: what the load test is there to catch
        payload, status = None, 0
    return status, (time.perf_counter() - started) * 1000.0, payload


def wait_healthy(url: str, worker: subprocess.Popen, timeout_s: float = 120.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if worker.poll() is not None:
            raise RuntimeError(f"worker exited with {worker.returncode}")
        try:
            with urllib.request.urlopen(url + "/health", timeout=2) as resp:
                if resp.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"worker at {url} not healthy after {timeout_s:.0f}s")
