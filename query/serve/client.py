"""Asking a running worker (`python -m query serve`) from a short-lived process: find it,
start one if asked to, send it a request, read its answer.

Kept apart from the worker and the engine on purpose: `python -m query` imports only this,
the settings and the renderer when a worker answers, so a call costs the interpreter's start
and two round trips instead of ~0.7 s of imports (numpy, pyarrow, FastAPI) and the model's
load (docs/query.md, *The worker*). Its calls are core.http_client's one-shot ones, on the standard
library: httpx alone would add ~60 ms to that start.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from core.http_client import ServiceError, bearer, get_json, post_json
from core.store.errors import InvalidLocation
from core.store.location import StoreLocation
from query.errors import UsageError

CLIENT_TIMEOUT_S = 300.0  # CoRAG with a slow LLM takes several LLM round trips
DEFAULT_PORT = 8765
DEFAULT_URL = f"http://127.0.0.1:{DEFAULT_PORT}"
# Asking the default port whether a worker listens: a refused connection answers at once;
# this bounds a port that accepts but does not answer.
PROBE_TIMEOUT_S = 0.5
START_TIMEOUT_S = 120.0  # loading the model and the indexes' in-memory structures


class WorkerUnavailable(RuntimeError):
    """The worker could not be reached or failed; the caller may answer in-process."""


def remote_answer(
    url: str,
    request_fields: Mapping[str, Any],
    timeout: float = CLIENT_TIMEOUT_S,
    token: str | None = None,
) -> dict[str, Any]:
    """POST the request fields to a worker (with the bearer `token` it requires, if any): its
    response dict, UsageError for a 400, or WorkerUnavailable when it cannot be reached or
    fails."""
    try:
        answered = post_json(
            url.rstrip("/") + "/retrieve",
            _jsonable(request_fields),
            timeout_s=timeout,
            headers=bearer(token),
        )
    except ServiceError as exc:
        # The worker's 400 is our own validation speaking: the request is wrong, not the worker.
        if exc.status == 400:
            raise UsageError(exc.detail) from None
        if exc.kind == "http":
            raise WorkerUnavailable(f"worker {url} answered {exc.status}: {exc.detail}") from None
        raise WorkerUnavailable(f"worker {url} unreachable: {exc.detail}") from None
    if not isinstance(answered, dict):
        raise WorkerUnavailable(f"worker {url} answered {type(answered).__name__}, not an object")
    return answered


def health(
    url: str, timeout: float = PROBE_TIMEOUT_S, token: str | None = None
) -> dict[str, Any] | None:
    """The worker's /health answer, or None when nothing healthy answers at `url` (or it
    refuses `token`)."""
    try:
        answered = get_json(url.rstrip("/") + "/health", timeout_s=timeout, headers=bearer(token))
    except ServiceError:
        return None
    ok = isinstance(answered, dict) and answered.get("status") == "ok"
    return answered if ok else None


def serves(worker: Mapping[str, Any], store: str) -> bool:
    """Whether a worker's /health names the store directory `store`."""
    theirs = str(worker.get("store") or "")
    if not theirs:
        return False
    try:
        served, mine = StoreLocation.parse(theirs), StoreLocation.parse(store)
    except InvalidLocation:
        return False
    return not (served.is_remote or mine.is_remote) and served.same_as(mine)


def start_worker(
    store: str, url: str = DEFAULT_URL, log: Path | None = None, token: str | None = None
) -> tuple[str, int]:
    """Start `python -m query serve` for the store directory `store` on the loopback port of
    `url`, in the background (its own session: it outlives this process), and wait until it
    is healthy; (its URL, its pid). Output goes to `log` (default: `<store>/worker.log`).
    The worker inherits our environment, RAG_AUTH_TOKEN included: `token` is that one."""
    port = int(url.rstrip("/").rsplit(":", 1)[1])
    url = f"http://127.0.0.1:{port}"
    log = log or Path(store) / "worker.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "query", "serve", "--store", store, "--port", str(port)]
    with open(log, "ab") as out:
        worker = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if worker.poll() is not None:
            raise WorkerUnavailable(
                f"the worker exited with status {worker.returncode} while starting (see {log})"
            )
        if health(url, timeout=1.0, token=token) is not None:
            return url, worker.pid
        time.sleep(0.2)
    worker.terminate()
    raise WorkerUnavailable(f"the worker was not healthy within {START_TIMEOUT_S:g}s (see {log})")


def _jsonable(fields: Mapping[str, Any]) -> dict[str, Any]:
    dump = getattr(fields, "model_dump", None)  # a QueryRequest (pydantic model)
    out = dump() if dump is not None else dict(fields)
    return {k: list(v) if isinstance(v, tuple) else v for k, v in out.items()}
