"""Small real HTTP servers (127.0.0.1, a free port, a background thread) that speak the
APIs the query side calls: OpenAI chat completions, TEI `/rerank`, Cohere/Jina `/v1/rerank`.

Each server records the requests it received and can be told to be slow, to trickle its
body, or to fail, so tests exercise the real clients' timeouts and error paths.

    with chat_server(lambda messages: '["a rewrite"]') as llm:
        settings = Settings(llm_endpoint=llm.url)
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    status: int = 200
    body: Any = None  # JSON-serialisable, or bytes sent as they are
    delay_s: float = 0.0  # before the status line
    trickle_s: float = 0.0  # between body bytes, after the headers

    def payload(self) -> bytes:
        if isinstance(self.body, bytes):
            return self.body
        return json.dumps(self.body).encode("utf-8")


@dataclass
class Received:
    method: str
    path: str
    body: Any


Handler = Callable[[Received], Reply]


@dataclass
class FakeServer:
    routes: dict[str, Handler]
    received: list[Received] = field(default_factory=list)
    url: str = ""

    def __post_init__(self) -> None:
        server = self

        class _Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = raw
                request = Received("POST", self.path, body)
                server.received.append(request)
                handler = server.routes.get(self.path)
                reply = handler(request) if handler else Reply(404, {"error": "Not Found"})
                self._send(reply)

            def do_GET(self) -> None:  # noqa: N802
                server.received.append(Received("GET", self.path, None))
                self._send(Reply(404, {"error": "Not Found"}))

            def _send(self, reply: Reply) -> None:
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                payload = reply.payload()
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    if reply.trickle_s:
                        for i in range(len(payload)):
                            self.wfile.write(payload[i : i + 1])
                            self.wfile.flush()
                            time.sleep(reply.trickle_s)
                    else:
                        self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up first, as timeout tests intend

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False  # a deliberately slow handler must not stall close
        host, port = self._httpd.server_address[:2]
        self.url = f"http://{host}:{port}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def start(self) -> FakeServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def paths(self) -> list[str]:
        return [r.path for r in self.received]


@contextmanager
def serving(routes: dict[str, Handler]) -> Iterator[FakeServer]:
    server = FakeServer(routes).start()
    try:
        yield server
    finally:
        server.stop()


# OpenAI-compatible chat completions


def chat_completion(content: str | None, model: str = "fake-llm") -> dict[str, Any]:
    """A chat completion body as OpenAI (and vLLM, llama.cpp, Ollama's /v1) return it."""
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "logprobs": None,
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def chat_handler(
    reply: str | Callable[[list[dict[str, Any]]], str], **reply_options: Any
) -> Handler:
    """A /v1/chat/completions handler answering `reply` (or reply(messages)) as content."""

    def handle(request: Received) -> Reply:
        messages = request.body.get("messages", []) if isinstance(request.body, dict) else []
        content = reply(messages) if callable(reply) else reply
        return Reply(body=chat_completion(content), **reply_options)

    return handle


@contextmanager
def chat_server(
    reply: str | Callable[[list[dict[str, Any]]], str], **reply_options: Any
) -> Iterator[FakeServer]:
    with serving({"/v1/chat/completions": chat_handler(reply, **reply_options)}) as server:
        yield server


def scripted_llm(
    rewrites: list[str], judgments: list[dict[str, Any]]
) -> Callable[[list[dict[str, Any]]], str]:
    """Replies for the query pipeline: the rewrite list to expansion prompts, and the
    judgments in turn (the last one repeated) to CoRAG's sufficiency prompts."""
    turn = iter(range(10_000))

    def reply(messages: list[dict[str, Any]]) -> str:
        system = str(messages[0].get("content", "")) if messages else ""
        if "rewrite" in system:
            return "Here are the rewrites:\n```json\n" + json.dumps(rewrites) + "\n```"
        judgment = judgments[min(next(turn), len(judgments) - 1)]
        return json.dumps(judgment)

    return reply


# Rerankers


def overlap_score(query: str, text: str) -> float:
    """A stand-in relevance: the share of the query's words found in the text."""
    words = {w.lower().strip("?.,") for w in query.split()}
    found = {w.lower().strip("?.,") for w in text.split()}
    return len(words & found) / max(1, len(words))


def tei_handler(**reply_options: Any) -> Handler:
    """TEI `POST /rerank`: {"query", "texts"} → [{"index", "score"}], best first."""

    def handle(request: Received) -> Reply:
        body = request.body if isinstance(request.body, dict) else {}
        if "texts" not in body:
            return Reply(422, {"error": "missing field `texts`", "error_type": "Validation"})
        scores = [
            {"index": i, "score": overlap_score(body["query"], t)}
            for i, t in enumerate(body["texts"])
        ]
        scores.sort(key=lambda s: -s["score"])
        return Reply(body=scores, **reply_options)

    return handle


def cohere_handler(**reply_options: Any) -> Handler:
    """Cohere/Jina `POST /v1/rerank`: {"model", "query", "documents", "top_n"} →
    {"results": [{"index", "relevance_score"}]}, best first, top_n of them."""

    def handle(request: Received) -> Reply:
        body = request.body if isinstance(request.body, dict) else {}
        if "documents" not in body:
            return Reply(400, {"message": "invalid request: documents is required"})
        results = [
            {"index": i, "relevance_score": overlap_score(body["query"], d)}
            for i, d in enumerate(body["documents"])
        ]
        results.sort(key=lambda r: -r["relevance_score"])
        top_n = body.get("top_n") or len(results)
        return Reply(
            body={
                "id": "rerank-fake",
                "results": results[:top_n],
                "meta": {"api_version": {"version": "1"}, "billed_units": {"search_units": 1}},
            },
            **reply_options,
        )

    return handle
