"""Asking a running worker (`python -m query serve`) from a short-lived process: find it,
start one if asked to, send it a request, read its answer.

A worker is found through its file in the store's folder (query/serve/worker_file.py), never
by guessing a port, and a token or a question goes to it only after it has proved that it
holds that file's secret: whatever else answers on its port (another user's process, say)
learns nothing.

Kept apart from the worker and the engine on purpose: `python -m query` imports only this,
the settings and the renderer when a worker answers, so a call costs the interpreter's start
and two round trips instead of ~0.7 s of imports (numpy, pyarrow, FastAPI) and the model's
load (docs/query.md, *The worker*). Its calls are core.http_client's one-shot ones, on the standard
library: httpx alone would add ~60 ms to that start.
"""

from __future__ import annotations

import subprocess
import time
import urllib.parse
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from core.http_client import ServiceError, bearer, get_json, post_json
from core.own_command import python_module
from core.settings import Settings
from query.errors import UsageError, store_location
from query.serve import worker_file
from query.serve.guard import LIVENESS_PATH
from query.serve.worker_file import CHALLENGE, WorkerFile, WorkerFileRefused, new_challenge

CLIENT_TIMEOUT_S = 300.0  # CoRAG with a slow LLM takes several LLM round trips
DEFAULT_PORT = 8765
DEFAULT_URL = f"http://127.0.0.1:{DEFAULT_PORT}"
# Asking a worker for its proof: a refused connection answers at once; this bounds a port
# that accepts but does not answer.
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


def local_store(store: str | None, settings: Settings) -> str | None:
    """The absolute store directory a request for `store` reads (None: the configured one),
    where its worker's file is; None for a TiDB store (name its worker with --worker)."""
    if store is None and settings.tidb_host:
        return None
    if store is not None and store_location(store).is_remote:
        return None
    return str(Path(store or settings.index_dir).resolve())


def proven(worker: WorkerFile, timeout: float = PROBE_TIMEOUT_S) -> bool:
    """Whether what answers at the worker file's URL holds its secret: asked with a fresh
    challenge and no token."""
    challenge = new_challenge()
    query = urllib.parse.urlencode({CHALLENGE: challenge})
    try:
        answered = get_json(f"{worker.url.rstrip('/')}{LIVENESS_PATH}?{query}", timeout_s=timeout)
    except ServiceError:
        return False
    return isinstance(answered, dict) and worker.proves(challenge, answered.get("proof"))


def find_worker(store: str, timeout: float = PROBE_TIMEOUT_S) -> WorkerFile | None:
    """The worker serving the absolute store directory `store`, from its worker file, once
    it has proved it holds the file's secret; None when there is no file or its worker does
    not prove it (gone, or not ours). WorkerFileRefused for a file that must not be trusted."""
    found = worker_file.read(store)
    if found is None or found.store != store or not proven(found, timeout):
        return None
    return found


def unproven(url: str, store: str) -> str | None:
    """Why a token or question must not go to the worker `url` that the user named for the
    store directory `store`: the store's worker file names that address and what answers
    there does not prove it holds the file's secret. None when it may (no such file: the
    user's choice stands)."""
    try:
        found = worker_file.read(store)
    except WorkerFileRefused as exc:
        return str(exc)
    if found is None or _address(found.url) != _address(url) or proven(found):
        return None
    return f"{url} did not prove it is the worker of {worker_file.path_in(store)}"


def start_worker(store: str, log: Path | None = None) -> tuple[str, int]:
    """Start `python -m query serve` for the absolute store directory `store` on a free
    loopback port, in the background (its own session: it outlives this process), and wait
    until its worker file names it and it has proved it; (its URL, its pid). Output goes to
    `log` (default: `<store>/worker.log`). It inherits our environment, RAG_AUTH_TOKEN
    included."""
    log = log or Path(store) / "worker.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    command = python_module("query", "serve", "--store", store, "--port", "0")
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
        try:
            found = worker_file.read(store)
        except WorkerFileRefused as exc:
            worker.terminate()
            raise WorkerUnavailable(str(exc)) from None
        if found is not None and found.pid == worker.pid and proven(found, timeout=1.0):
            return found.url, worker.pid
        time.sleep(0.2)
    worker.terminate()
    raise WorkerUnavailable(f"the worker was not healthy within {START_TIMEOUT_S:g}s (see {log})")


def _address(url: str) -> tuple[str, str, int | None]:
    """(scheme, host, port) of `url`, loopback's names as one."""
    parts = urllib.parse.urlsplit(url.strip())
    host = (parts.hostname or "").lower()
    if host in ("localhost", "127.0.0.1"):
        host = "127.0.0.1"
    try:
        port = parts.port
    except ValueError:
        port = None
    return parts.scheme.lower(), host, port


def _jsonable(fields: Mapping[str, Any]) -> dict[str, Any]:
    dump = getattr(fields, "model_dump", None)  # a QueryRequest (pydantic model)
    out = dump() if dump is not None else dict(fields)
    return {k: list(v) if isinstance(v, tuple) else v for k, v in out.items()}
