"""The embeddings server: this project's embedding model over OpenAI's embeddings protocol,
so that other machines' ingests can embed with it (`rag-retrieve embeddings-server`).

    POST /v1/embeddings  {"model": str, "input": str | [str, ...],
                          "encoding_format"?: "float" | "base64", "dimensions"?: int}
                         -> {"object": "list", "data": [{"object": "embedding", "index": i,
                             "embedding": [...]}], "model": ..., "usage": {"prompt_tokens": n,
                             "total_tokens": n}}
    GET  /v1/models      -> {"object": "list", "data": [{"id": ..., "object": "model", ...}]}
    GET  /health         -> {"status": "ok", "model", "revision", "runtime", "precision",
                             "dim", "max_inputs", "in_flight", "capacity"}: the model identity
                             (core/embedding/identity.py) a client checks before mixing this
                             server's vectors into an index
    GET  /live           -> {"status": "ok"}: the liveness probe, the one route a token does
                            not cover

Errors come in OpenAI's shape, `{"error": {"message", "type", "param", "code"}}`: 400 for a
body that is not such a request, 404 for a model other than the served one (its id and its
short name are both accepted: `sentence-transformers/all-MiniLM-L6-v2`, `all-MiniLM-L6-v2`),
413 for a body over the limit, 503 with Retry-After when saturated; the guard's refusals
(421, 403, 401, 415; query/serve/guard.py) too.

The texts are embedded exactly as sent, with no prefix: OpenAI-shaped servers pass input
through untouched, and our client (core/embedding/http_runtime.py's HTTPEmbedder) adds the
model's document or query prefix itself, so a vector from here equals the local runtime's
`embed_documents` of the same text. Texts over the model's max_length are truncated as the
local runtime truncates them.

The model is loaded once; one thread runs it (inference is serialised, so more would only
queue). The limits, and why:
- at most MAX_INPUTS texts per request: OpenAI's own limit, so a client written for it
  already sends no more;
- a body of at most MAX_BODY_BYTES: MAX_INPUTS texts of ~4 KB (a 512-token chunk is ~2 KB);
- at most MAX_PENDING requests running or queued, each holding its texts in memory; beyond,
  503 with Retry-After: a pool's client then sends the batch to another server.
"""

from __future__ import annotations

import base64
import json
import sys
import threading
import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import anyio
import numpy as np
import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from core.embedding.base import BatchedEmbedder
from core.embedding.identity import ModelIdentity, model_identity
from core.embedding.models import find_spec
from query.serve.guard import LIVENESS_PATH, Access, LocalGuard
from query.serve.transport import Refused, http_error_message, listen, read_json, socket_url

DEFAULT_PORT = 8766
MAX_INPUTS = 2048
MAX_BODY_BYTES = 8 << 20
MAX_PENDING = 32
READ_TIMEOUT_S = 30.0
ENCODINGS = ("float", "base64")
# OpenAI's code for a refused key; other refusals carry the code of their cause, or none.
_ERROR_CODES = {401: "invalid_api_key"}


@dataclass(frozen=True)
class EmbeddingLimits:
    max_inputs: int = MAX_INPUTS
    max_body_bytes: int = MAX_BODY_BYTES
    max_pending: int = MAX_PENDING
    read_timeout_s: float = READ_TIMEOUT_S
    backlog: int = 1024
    keep_alive_s: float = 5.0


class ApiError(Exception):
    """A request answered with an error in OpenAI's shape."""

    def __init__(
        self, status: int, message: str, *, param: str | None = None, code: str | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.param = param
        self.code = code


def error_body(
    status: int, message: str, param: str | None = None, code: str | None = None
) -> dict[str, Any]:
    """OpenAI's error object (what HTTPEmbedder and the openai client read)."""
    kind = "server_error" if status >= 500 else "invalid_request_error"
    code = code or _ERROR_CODES.get(status)
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


class ServedModel:
    """One loaded embedder, the names it answers to and its identity."""

    def __init__(self, embedder: BatchedEmbedder) -> None:
        self.embedder = embedder
        self.identity: ModelIdentity = model_identity(embedder)
        self.id = self.identity.model_id
        self.short_name = self.id.rsplit("/", 1)[-1]

    def answers_to(self, name: str) -> bool:
        """Whether `name` is the served model's id, short name or a registered alias. Looked
        up in the registry only, never as a path: a client's string does not touch the disk."""
        if name in (self.id, self.short_name):
            return True
        spec = find_spec(name)
        return spec is not None and spec.model_id == self.id

    def embed(self, texts: list[str]) -> tuple[np.ndarray, int]:
        """The vectors of `texts` as given (no prefix) and their token count. Called by one
        thread at a time: the token count is this call's."""
        vectors = self.embedder.embed_unprefixed(texts)
        return vectors, self.embedder.last_stats.tokens


def parse_request(
    body: Mapping[str, Any], model: ServedModel, limits: EmbeddingLimits
) -> tuple[list[str], str]:
    """(texts, encoding format) of an embeddings request; ApiError otherwise."""
    name = body.get("model")
    if not isinstance(name, str) or not name.strip():
        raise ApiError(400, "'model' must name the served model", param="model")
    if not model.answers_to(name.strip()):
        raise ApiError(
            404,
            f"the model {name!r} is not served here; this server serves {model.id!r} "
            f"(also answers to {model.short_name!r})",
            param="model",
            code="model_not_found",
        )
    texts = body.get("input")
    if isinstance(texts, str):
        texts = [texts]
    if not isinstance(texts, list) or not texts:
        raise ApiError(400, "'input' must be a non-empty string or list of strings", param="input")
    if len(texts) > limits.max_inputs:
        raise ApiError(
            400, f"{len(texts)} inputs, at most {limits.max_inputs} per request", param="input"
        )
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            # OpenAI also takes token ids; tokenizing is this server's, with its model's tokenizer.
            raise ApiError(
                400, f"input[{i}] is not a string (send texts, not token ids)", param="input"
            )
        if not text:
            raise ApiError(400, f"input[{i}] is an empty string", param="input")
    encoding = body.get("encoding_format") or "float"
    if encoding not in ENCODINGS:
        raise ApiError(
            400,
            f"encoding_format must be one of {', '.join(ENCODINGS)}",
            param="encoding_format",
        )
    dimensions = body.get("dimensions")
    if dimensions is not None and dimensions != model.identity.dim:
        raise ApiError(
            400,
            f"dimensions {dimensions!r}: {model.id} gives {model.identity.dim}-d vectors only",
            param="dimensions",
        )
    return texts, encoding


def _encoded(vector: np.ndarray, encoding: str) -> list[float] | str:
    if encoding == "base64":  # OpenAI's: the little-endian float32 bytes
        return base64.b64encode(vector.astype("<f4").tobytes()).decode("ascii")
    return vector.tolist()


def _json(
    status: int, payload: Mapping[str, Any], headers: dict[str, str] | None = None
) -> Response:
    return Response(
        content=json.dumps(payload, ensure_ascii=False),
        status_code=status,
        media_type="application/json",
        headers=headers,
    )


def _error(status: int, message: str, headers: dict[str, str] | None = None, **kw: Any) -> Response:
    return _json(status, error_body(status, message, **kw), headers)


def create_app(
    model: ServedModel, limits: EmbeddingLimits, log: Callable[[str], None] | None = None
) -> FastAPI:
    """The embeddings server's ASGI app around one loaded model (routes in the docstring)."""
    say = log or (lambda line: print(line, file=sys.stderr, flush=True))
    app = FastAPI(title="rag-retrieve embeddings server", docs_url=None, redoc_url=None)
    one_at_a_time = anyio.CapacityLimiter(1)
    state = {"pending": 0}
    created = int(time.time())
    identity = model.identity

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        message = http_error_message(request, exc)
        return _error(exc.status_code, message, dict(exc.headers or {}))

    @app.get(LIVENESS_PATH)
    async def live() -> Response:
        return _json(200, {"status": "ok"})

    @app.get("/health")
    async def health() -> Response:
        return _json(
            200,
            {
                "status": "ok",
                "model": identity.model_id,
                "revision": identity.revision,
                "runtime": identity.runtime,
                "precision": identity.precision,
                "dim": identity.dim,
                "max_inputs": limits.max_inputs,
                "in_flight": state["pending"],
                "capacity": limits.max_pending,
            },
        )

    @app.get("/v1/models")
    async def models() -> Response:
        entry = {"id": model.id, "object": "model", "created": created, "owned_by": "rag-retrieve"}
        return _json(200, {"object": "list", "data": [entry]})

    @app.post("/v1/embeddings")
    async def embeddings(request: Request) -> Response:
        if state["pending"] >= limits.max_pending:
            return _error(
                503,
                f"busy: {state['pending']} requests running or queued, retry shortly",
                {"Retry-After": "1"},
            )
        state["pending"] += 1
        try:
            body = await read_json(request, limits.max_body_bytes, limits.read_timeout_s)
            texts, encoding = parse_request(body, model, limits)
            vectors, tokens = await anyio.to_thread.run_sync(
                model.embed, texts, limiter=one_at_a_time
            )
        except Refused as exc:
            return _error(exc.status, str(exc), exc.headers)
        except ApiError as exc:
            return _error(exc.status, str(exc), param=exc.param, code=exc.code)
        except Exception as exc:  # a bug or a model failure, not bad input: say so, keep serving
            say(traceback.format_exc())
            return _error(500, f"internal error: {type(exc).__name__}: {exc}")
        finally:
            state["pending"] -= 1
        data = [
            {"object": "embedding", "index": i, "embedding": _encoded(vector, encoding)}
            for i, vector in enumerate(vectors)
        ]
        usage = {"prompt_tokens": tokens, "total_tokens": tokens}
        return _json(200, {"object": "list", "data": data, "model": model.id, "usage": usage})

    return app


class EmbeddingsServer:
    """A bound uvicorn server (port 0 = any free port) for one model: `url` is known, and
    connections queue, before it serves. Every request passes the guard first."""

    def __init__(
        self,
        model: ServedModel,
        access: Access,
        host: str = "127.0.0.1",
        port: int = DEFAULT_PORT,
        *,
        limits: EmbeddingLimits | None = None,
        log: Callable[[str], None] | None = None,
    ) -> None:
        self.model = model
        self.limits = limits or EmbeddingLimits()
        self.log = log or (lambda line: print(line, file=sys.stderr, flush=True))
        self.socket = listen(host, port, self.limits.backlog)
        guarded = LocalGuard(
            create_app(model, self.limits, self.log),
            access,
            error_body=lambda status, message: error_body(status, message),
        )
        config = uvicorn.Config(
            guarded,
            backlog=self.limits.backlog,
            timeout_keep_alive=int(self.limits.keep_alive_s),
            log_level="warning",
            access_log=False,
            lifespan="off",
        )
        self.server = uvicorn.Server(config)
        self._serving = threading.Event()
        self._stopped = threading.Event()

    @property
    def url(self) -> str:
        return socket_url(self.socket)

    def serve_forever(self) -> None:
        """Serve until shut down (SIGINT and SIGTERM stop it cleanly when run in the main
        thread); the socket is closed afterwards."""
        self._serving.set()
        try:
            self.server.run(sockets=[self.socket])
        finally:
            self.socket.close()
            self._stopped.set()

    def start_in_thread(self) -> threading.Thread:
        thread = threading.Thread(target=self.serve_forever, daemon=True)
        thread.start()
        return thread

    def shutdown(self, timeout_s: float = 10.0) -> None:
        """Stop serving and wait until the server has let go of the socket."""
        self.server.should_exit = True
        if self._serving.is_set():
            self._stopped.wait(timeout_s)
        else:
            self.socket.close()

    def ready_line(self) -> str:
        i = self.model.identity
        return (
            f"embeddings server on {self.url}/v1/embeddings: model {i.model_id} "
            f"({i.runtime}, {i.precision}, {i.dim}-d, revision {i.revision or 'unknown'}), "
            f"up to {self.limits.max_inputs} inputs a request, {self.limits.max_pending} "
            "requests queued"
        )

    def ready_json(self) -> dict[str, Any]:
        i = self.model.identity
        return {
            "url": self.url,
            "model": i.model_id,
            "revision": i.revision,
            "runtime": i.runtime,
            "precision": i.precision,
            "dim": i.dim,
        }
