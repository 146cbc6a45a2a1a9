"""A small HTTP worker that keeps one Engine warm, and the client the CLI uses to reach it.

    POST /retrieve  body: the request fields as JSON (query, domain, ios_version, frameworks,
                    top_k, corag, user_codebase, indexes, mode, fusion, max_tokens,
                    fresh_within_days, include_deprecated, strict, rerank, expand)
                    -> 200 with the response JSON, 400 {"error": ...} for any bad input
    GET  /health    -> {"status": "ok", "indexes": [...], "model": ..., "store": ...}

Standard library only (ThreadingHTTPServer): it starts in milliseconds, and each request
runs in its own thread against the shared Engine, which pools index handles and serialises
model inference. Bind to loopback: there is no authentication.
"""

from __future__ import annotations

import json
import sys
import traceback
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import asdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from query.engine import Engine
from query.pipeline import UsageError, answer, make_request
from query.retrieve import DEGRADED

MAX_BODY_BYTES = 1 << 20
CLIENT_TIMEOUT_S = 300.0  # CoRAG with a slow LLM takes several LLM round trips


class WorkerUnavailable(RuntimeError):
    """The worker could not be reached or failed; the caller may answer in-process."""


class QueryServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(
        self,
        address: tuple[str, int],
        engine: Engine,
        log: Callable[[str], None] | None = None,
    ) -> None:
        super().__init__(address, Handler)
        self.engine = engine
        self.log = log or (lambda line: print(line, file=sys.stderr, flush=True))

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}"


class Handler(BaseHTTPRequestHandler):
    server: QueryServer

    def do_GET(self) -> None:
        if self.path.rstrip("/") == "/health":
            engine = self.server.engine
            self._send(
                200,
                {
                    "status": "ok",
                    "indexes": engine.index_names(),
                    "model": engine.model_id(),
                    "store": engine.location,
                },
            )
        elif self.path.rstrip("/") == "/retrieve":
            self._send(405, {"error": "use POST for /retrieve"})
        else:
            self._send(404, {"error": f"no such path {self.path}"})

    def do_POST(self) -> None:
        if self.path.rstrip("/") != "/retrieve":
            self._send(404, {"error": f"no such path {self.path}"})
            return
        try:
            body = self._json_body()
            request = make_request(body)
            response = answer(request, self.server.engine)
        except UsageError as exc:
            self._send(400, {"error": str(exc)})
            return
        except _BodyError as exc:
            self._send(exc.status, {"error": str(exc)})
            return
        except Exception as exc:  # a bug, not bad input: say so, keep serving
            self.server.log(traceback.format_exc())
            self._send(500, {"error": f"internal error: {type(exc).__name__}: {exc}"})
            return
        for note in response.notes:
            if note.startswith(DEGRADED):
                self.server.log(f"query worker: {note}")
        self._send(200, response.to_dict())

    def _json_body(self) -> dict[str, Any]:
        length = self.headers.get("Content-Length")
        if length is None or not length.isdigit():
            raise _BodyError(411, "a JSON body with a Content-Length header is required")
        if int(length) > MAX_BODY_BYTES:
            raise _BodyError(413, f"body over {MAX_BODY_BYTES} bytes")
        raw = self.rfile.read(int(length))
        try:
            body = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise _BodyError(400, f"invalid JSON: {exc}") from None
        if not isinstance(body, dict):
            raise _BodyError(400, f"the body must be a JSON object, got {type(body).__name__}")
        return body

    def _send(self, status: int, payload: Mapping[str, Any]) -> None:
        data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        self.server.log(f"query worker: {self.address_string()} {format % args}")


class _BodyError(ValueError):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def make_server(engine: Engine, host: str = "127.0.0.1", port: int = 8765, **kw) -> QueryServer:
    """A bound server (port 0 = any free port); call serve_forever() to run it."""
    return QueryServer((host, port), engine, **kw)


def serve(engine: Engine, host: str = "127.0.0.1", port: int = 8765) -> None:
    """Warm the engine, then serve until interrupted."""
    engine.warm()
    server = make_server(engine, host, port)
    server.log(
        f"query worker on {server.url} (store {engine.location}, "
        f"indexes: {', '.join(engine.index_names()) or 'none'}, model {engine.model_id()})"
    )
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        engine.close()


def remote_answer(url: str, request_fields: Mapping[str, Any], timeout: float = CLIENT_TIMEOUT_S):
    """POST the request to a worker: its response dict, UsageError for a 400, or
    WorkerUnavailable when it cannot be reached or fails."""
    body = json.dumps(_jsonable(request_fields)).encode("utf-8")
    req = urllib.request.Request(
        url.rstrip("/") + "/retrieve",
        data=body,
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return json.loads(resp.read().decode("utf-8"))
    except urllib.error.HTTPError as exc:
        message = _error_of(exc)
        if exc.code == 400:
            raise UsageError(message) from None
        raise WorkerUnavailable(f"worker {url} answered {exc.code}: {message}") from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise WorkerUnavailable(f"worker {url} unreachable: {reason}") from None


def _jsonable(fields: Mapping[str, Any]) -> dict[str, Any]:
    out = asdict(fields) if hasattr(fields, "__dataclass_fields__") else dict(fields)
    return {k: list(v) if isinstance(v, tuple) else v for k, v in out.items()}


def _error_of(exc: urllib.error.HTTPError) -> str:
    try:
        return str(json.loads(exc.read().decode("utf-8")).get("error"))
    except Exception:
        return exc.reason or str(exc.code)
