"""The warm worker: one Engine behind FastAPI on uvicorn (its client: query/serve/client.py).

    POST /retrieve  body: the request fields as JSON (query, domain, ios_version, frameworks,
                    top_k, corag, user_codebase, indexes, mode, fusion, max_tokens,
                    fresh_within_days, include_deprecated, strict, rerank, expand)
                    -> 200 with the response JSON; 400 {"error": ...} for any bad input;
                    408 when the body does not arrive within the read timeout; 411 without a
                    length; 413 over the size limit; 503 + Retry-After when saturated
    GET  /health    -> {"status": "ok", "indexes": [...], "model": ..., "store": ...,
                        "in_flight": n, "capacity": n}
    GET  /live      -> {"status": "ok"}: the bare liveness probe, the one route a token
                       (query/serve/guard.py) does not cover; with `?challenge=HEX` also
                       "proof": that this worker holds its worker file's secret

Serving a store directory, the worker writes `<store>/worker.json` while it serves: how
clients find it and check that it is this store's worker before they send a token or a
question (query/serve/worker_file.py).

Agents call this before every step, many at once. uvicorn gives the production basics (a
listen backlog of hundreds, keep-alive timeouts, HTTP parsing); the limits that protect the
engine are ours: a fixed pool of threads runs retrievals (the engine serialises model
inference, so more threads only queue), requests beyond `worker_max_pending` are turned
away at once with 503 instead of piling up, and a body must arrive within
`worker_read_timeout_s`. Who may ask at all is the guard's to say (query/serve/guard.py):
loopback's Host names only, no browser origins, and a bearer token when one is set.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import anyio
import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import Response
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp

from core.settings import Settings
from core.store.location import StoreLocation
from core.store.modes import LONG_LIVED
from query.errors import DEGRADED, store_location
from query.retrieval.engine import Engine
from query.retrieval.pipeline import UsageError, answer, make_request
from query.serve import worker_file
from query.serve.guard import LIVENESS_PATH, Access, LocalGuard
from query.serve.transport import Refused, http_error_message, listen, read_json, socket_url
from query.serve.worker_file import Proving, WorkerFile, WorkerFileRefused
from query.types import QueryRequest


def open_engine(settings: Settings, store: str | None) -> Engine:
    """The engine a long-lived server keeps, on the store at `store` (a directory or tidb://
    URL; None = the configured one). Warm it (`engine.warm()`) before or while serving.
    Opened LONG_LIVED: keyword searches from the in-memory postings (FTS5 while a new
    generation's are built), vectors by a sign-code shortlist from SHORTLIST_FROM rows
    (core/store/modes.py)."""
    directory = store_location(store).directory if store else None
    if directory is not None and not directory.is_dir():
        raise UsageError(f"no store directory {store}")
    return Engine.open(settings, store, modes=LONG_LIVED)


@dataclass(frozen=True)
class WorkerLimits:
    threads: int = 4
    max_pending: int = 128
    max_body_bytes: int = 1 << 20
    read_timeout_s: float = 10.0
    backlog: int = 1024
    keep_alive_s: float = 5.0

    @classmethod
    def from_settings(cls, settings: Settings) -> WorkerLimits:
        return cls(
            threads=settings.worker_threads,
            max_pending=settings.worker_max_pending,
            max_body_bytes=settings.worker_max_body_bytes,
            read_timeout_s=settings.worker_read_timeout_s,
        )


RETRIEVE_OPENAPI = {
    "requestBody": {
        "required": True,
        "content": {"application/json": {"schema": QueryRequest.model_json_schema()}},
    }
}


def _json(status: int, payload: Mapping[str, Any], headers: dict[str, str] | None = None):
    return Response(
        content=json.dumps(payload, ensure_ascii=False),
        status_code=status,
        media_type="application/json; charset=utf-8",
        headers=headers,
    )


def create_app(
    engine: Engine, limits: WorkerLimits, log: Callable[[str], None] | None = None
) -> FastAPI:
    """The worker's ASGI app around one warm engine."""
    say = log or (lambda line: print(line, file=sys.stderr, flush=True))
    app = FastAPI(title="rag-retrieve worker", docs_url=None, redoc_url=None)
    limiter = anyio.CapacityLimiter(limits.threads)
    state = {"pending": 0}

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        message = http_error_message(request, exc)
        return _json(exc.status_code, {"error": message}, dict(exc.headers or {}))

    @app.get(LIVENESS_PATH)
    async def live() -> Response:
        return _json(200, {"status": "ok"})

    @app.get("/health")
    async def health() -> Response:
        return _json(
            200,
            {
                "status": "ok",
                "indexes": engine.index_names(),
                "model": engine.model_id(),
                "store": _absolute(engine.shown_location),
                "in_flight": state["pending"],
                "capacity": limits.max_pending,
            },
        )

    # The body is read by hand (limits, our 400s), so its schema is declared for the OpenAPI
    # document clients and fuzzers read: the request model's own.
    @app.post("/retrieve", openapi_extra=RETRIEVE_OPENAPI)
    async def retrieve(request: Request) -> Response:
        if state["pending"] >= limits.max_pending:
            return _json(
                503,
                {"error": f"busy: {state['pending']} requests in progress, retry shortly"},
                {"Retry-After": "1"},
            )
        state["pending"] += 1
        try:
            body = await read_json(request, limits.max_body_bytes, limits.read_timeout_s)
            fields = make_request(body)
            response = await anyio.to_thread.run_sync(answer, fields, engine, limiter=limiter)
        except Refused as exc:
            return _json(exc.status, {"error": str(exc)}, exc.headers)
        except UsageError as exc:
            return _json(400, {"error": str(exc)})
        except Exception as exc:  # a bug, not bad input: say so, keep serving
            say(traceback.format_exc())
            return _json(500, {"error": f"internal error: {type(exc).__name__}: {exc}"})
        finally:
            state["pending"] -= 1
        for note in response.notes:
            if note.startswith(DEGRADED):
                say(f"query worker: {note}")
        return _json(200, response.to_dict())

    return app


class WorkerServer:
    """A bound uvicorn server (port 0 = any free port): `url` is known before it serves.
    Every request passes the guard first (`access`; default: loopback only, the settings'
    token).

    `app` replaces the worker's own app with one that embeds it (query.mcp.server's: MCP on
    /mcp, the worker's routes beside it); its lifespan runs, the worker's has none."""

    def __init__(
        self,
        engine: Engine,
        host: str = "127.0.0.1",
        port: int = 8765,
        *,
        limits: WorkerLimits | None = None,
        log: Callable[[str], None] | None = None,
        app: ASGIApp | None = None,
        access: Access | None = None,
    ) -> None:
        self.limits = limits or WorkerLimits()
        self.access = access or Access.for_server(host, engine.settings)
        self.log = log or (lambda line: print(line, file=sys.stderr, flush=True))
        self.socket = listen(host, port, self.limits.backlog)
        served = app if app is not None else create_app(engine, self.limits, self.log)
        directory = _store_directory(engine)
        self.advert = WorkerFile.drawn(self.url, str(directory)) if directory else None
        if self.advert is not None:
            served = Proving(served, self.advert)
        config = uvicorn.Config(
            # The one guard, in front of whatever is served: the worker's routes and /mcp.
            LocalGuard(served, self.access),
            backlog=self.limits.backlog,
            timeout_keep_alive=int(self.limits.keep_alive_s),
            log_level="warning",
            access_log=False,
            lifespan="off" if app is None else "on",
        )
        self.server = _Server(config, on_shutdown=self._withdraw)
        self._serving = threading.Event()
        self._stopped = threading.Event()

    @property
    def url(self) -> str:
        """Where a client on this machine reaches the server (a wildcard bind by loopback)."""
        return socket_url(self.socket)

    def serve_forever(self) -> None:
        """Serve until shut down, with the worker file written meanwhile."""
        self._serving.set()
        self._advertise()
        try:
            self.server.run(sockets=[self.socket])
        finally:
            self._withdraw()
            self._stopped.set()

    def _advertise(self) -> None:
        if self.advert is None:
            return
        try:
            path = worker_file.write(self.advert)
        except (OSError, WorkerFileRefused) as exc:
            # Still serving, for clients that name it: --worker URL.
            self.log(f"query worker: clients will not find it by its store: {exc}")
            return
        self.log(f"query worker: found by its clients through {path}")

    def _withdraw(self) -> None:
        if self.advert is not None:
            worker_file.remove(self.advert)

    def start_in_thread(self) -> threading.Thread:
        thread = threading.Thread(target=self.serve_forever, daemon=True)
        thread.start()
        return thread

    def shutdown(self, timeout_s: float = 10.0) -> None:
        """Stop serving and wait until the server has let go of the socket."""
        self.server.should_exit = True
        if self._serving.is_set():
            self._stopped.wait(timeout_s)

    def server_close(self) -> None:
        self.socket.close()


class _Server(uvicorn.Server):
    """uvicorn's server, calling `on_shutdown` as it stops serving: after a graceful exit on
    SIGTERM or SIGINT uvicorn raises the signal again, so no code after `run` would run."""

    def __init__(self, config: uvicorn.Config, on_shutdown: Callable[[], None]) -> None:
        super().__init__(config)
        self.on_shutdown = on_shutdown

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self.on_shutdown()
        await super().shutdown(sockets)


def make_server(
    engine: Engine,
    host: str = "127.0.0.1",
    port: int = 8765,
    *,
    limits: WorkerLimits | None = None,
    log: Callable[[str], None] | None = None,
    access: Access | None = None,
    app: ASGIApp | None = None,
) -> WorkerServer:
    """A bound server (port 0 = any free port); call serve_forever() to run it. `app` as
    for WorkerServer."""
    return WorkerServer(engine, host, port, limits=limits, log=log, access=access, app=app)


def serve(
    engine: Engine,
    host: str = "127.0.0.1",
    port: int = 8765,
    limits: WorkerLimits | None = None,
    access: Access | None = None,
) -> None:
    """Warm the engine, then serve until interrupted (SIGINT/SIGTERM stop it cleanly)."""
    engine.warm()
    server = make_server(engine, host, port, limits=limits, access=access)
    server.log(
        f"query worker on {server.url} (store {engine.shown_location}, "
        f"indexes: {', '.join(engine.index_names()) or 'none'}, model {engine.model_id()}, "
        f"{server.limits.threads} threads, up to {server.limits.max_pending} requests)"
    )
    try:
        server.serve_forever()
    finally:
        server.server_close()
        engine.close()


def _store_directory(engine: Engine) -> str | None:
    """The absolute store directory `engine` serves; None for a TiDB store."""
    if not engine.shown_location:
        return None
    directory = StoreLocation.parse(engine.shown_location).directory
    return str(directory.resolve()) if directory is not None else None


def _absolute(location: str) -> str:
    """A store directory made absolute, so that a client in another directory can tell
    whether this is the store it means (query.serve.client.serves); a URL as it is."""
    directory = StoreLocation.parse(location).directory
    return str(directory.resolve()) if directory is not None else location
