"""A replay server for the crawler's tests: a real HTTP server on 127.0.0.1 that serves
render JSON pages under Apple's layout (`/tutorials/data/documentation/…json`) or a DocC
site's (`/<prefix>/data/documentation/…json`), with ETag and Last-Modified, 304 for a
matching conditional request, and faults injected per path: 429 with Retry-After, 503, a
slow body, a truncated body, an HTML error page with a 200, a redirect, a redirect loop.
It records every request (path, headers, start and end) and the most requests it ever had in
flight, so politeness is measured, not assumed."""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx


@dataclass
class Fault:
    kind: str  # "429", "503", "slow", "truncate", "html", "redirect", "loop", "offsite"
    times: int = 1  # how many requests it hits; then the page is served normally
    retry_after: str = "1"
    delay_s: float = 0.0
    location: str = ""


@dataclass
class Hit:
    path: str
    headers: dict[str, str]
    start: float
    end: float = 0.0
    status: int = 0
    body_bytes: int = 0


@dataclass
class ReplayServer:
    pages: dict[str, bytes] = field(default_factory=dict)  # URL path → body
    faults: dict[str, list[Fault]] = field(default_factory=dict)
    robots: str | None = None
    hits: list[Hit] = field(default_factory=list)
    max_in_flight: int = 0
    url: str = ""

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._in_flight = 0
        self._mtimes: dict[str, float] = {}
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
                server._serve(self)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False
        host, port = self._httpd.server_address[:2]
        self.url = f"http://{host}:{port}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()

    def put(self, path: str, body: bytes) -> None:
        """Serve `body` at `path` from now on, with a new ETag and Last-Modified."""
        with self._lock:
            self.pages[path] = body
            self._mtimes[path] = time.time()

    def remove(self, path: str) -> None:
        with self._lock:
            self.pages.pop(path, None)

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def page_hits(self) -> list[Hit]:
        return [h for h in self.hits if h.path != "/robots.txt"]

    def bodies_sent(self) -> list[str]:
        return [h.path for h in self.page_hits() if h.status == 200 and h.body_bytes]

    def _serve(self, handler: BaseHTTPRequestHandler) -> None:
        hit = Hit(handler.path, dict(handler.headers.items()), time.monotonic())
        with self._lock:
            self.hits.append(hit)
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
        try:
            self._answer(handler, hit)
        except (BrokenPipeError, ConnectionResetError):
            pass
        finally:
            with self._lock:
                self._in_flight -= 1
            hit.end = time.monotonic()

    def _answer(self, handler: BaseHTTPRequestHandler, hit: Hit) -> None:
        path = handler.path.split("?", 1)[0]
        if path == "/robots.txt":
            if self.robots is None:
                return _send(handler, hit, 404, b"not found", "text/plain")
            return _send(handler, hit, 200, self.robots.encode(), "text/plain")
        fault = self._take_fault(path)
        if fault is not None and fault.kind in ("429", "503"):
            headers = {"Retry-After": fault.retry_after} if fault.retry_after else {}
            return _send(handler, hit, int(fault.kind), b"busy", "text/plain", headers)
        if fault is not None and fault.kind in ("redirect", "loop", "offsite"):
            location = fault.location or (path if fault.kind == "loop" else path)
            return _send(handler, hit, 302, b"", "text/plain", {"Location": location})
        if fault is not None and fault.kind == "html":
            page = b"<html><body>Service temporarily unavailable</body></html>"
            return _send(handler, hit, 200, page, "text/html")
        with self._lock:
            body = self.pages.get(path)
            mtime = self._mtimes.get(path, 0.0)
        if body is None:
            return _send(handler, hit, 404, b"{}", "application/json")
        etag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
        modified = formatdate(mtime, usegmt=True)
        validators = {"ETag": etag, "Last-Modified": modified}
        if handler.headers.get("If-None-Match") == etag:
            return _send(handler, hit, 304, b"", "application/json", validators)
        if fault is not None and fault.kind == "truncate":
            return _send(handler, hit, 200, body, "application/json", validators, cut=True)
        delay = fault.delay_s if fault is not None and fault.kind == "slow" else 0.0
        _send(handler, hit, 200, body, "application/json", validators, delay_s=delay)

    def _take_fault(self, path: str) -> Fault | None:
        with self._lock:
            queue = self.faults.get(path) or []
            if not queue:
                return None
            fault = queue[0]
            fault.times -= 1
            if fault.times <= 0:
                queue.pop(0)
            return fault


def _send(
    handler: BaseHTTPRequestHandler,
    hit: Hit,
    status: int,
    body: bytes,
    kind: str,
    headers: dict[str, str] | None = None,
    *,
    cut: bool = False,
    delay_s: float = 0.0,
) -> None:
    hit.status = status
    handler.send_response(status)
    handler.send_header("Content-Type", kind)
    handler.send_header("Content-Length", str(len(body)))
    for name, value in (headers or {}).items():
        handler.send_header(name, value)
    if cut:
        handler.send_header("Connection", "close")
    handler.end_headers()
    if status == 304:
        return
    if delay_s:
        time.sleep(delay_s)
    data = body[: len(body) // 2] if cut else body
    handler.wfile.write(data)
    handler.wfile.flush()
    hit.body_bytes = len(data)
    if cut:
        handler.close_connection = True


@contextmanager
def replay(pages: dict[str, bytes] | None = None, **options: Any) -> Iterator[ReplayServer]:
    server = ReplayServer(**options)
    for path, body in (pages or {}).items():
        server.put(path, body)
    try:
        yield server
    finally:
        server.stop()


def archive_pages(archive: Path, prefix: str) -> dict[str, bytes]:
    """A DocC archive's pages under a site's data path: `<prefix>/data/documentation/…`."""
    data = archive / "data"
    return {
        f"{prefix}/data/{p.relative_to(data).as_posix()}": p.read_bytes()
        for p in sorted(data.rglob("*.json"))
    }


def reachable(archive: Path, root: str = "/documentation/argumentparser") -> int:
    """The pages of an archive reachable from `root` by topic references under it, counted
    from the archive itself: what a crawl of the root must fetch."""
    data = archive / "data"
    seen, todo = {root}, [root]
    while todo:
        page = json.loads((data / (todo.pop()[1:] + ".json")).read_text())
        for ref in page["references"].values():
            url = (ref.get("url") or "").lower()
            under = ref.get("type") == "topic" and url.startswith(root)
            if under and url not in seen and (data / (url[1:] + ".json")).is_file():
                seen.add(url)
                todo.append(url)
    return len(seen)


class ToReplay(httpx.AsyncBaseTransport):
    """An httpx transport that sends every request for any host to the replay server, over
    real HTTP, keeping the original Host: how a test fetches developer.apple.com's layout
    from 127.0.0.1. It records the hosts asked for."""

    def __init__(self, server: ReplayServer) -> None:
        self._server = httpx.URL(server.url)
        self._inner = httpx.AsyncHTTPTransport()
        self.hosts: list[str] = []

    async def handle_async_request(self, request: Any) -> Any:
        self.hosts.append(request.url.host)
        request.url = request.url.copy_with(
            scheme=self._server.scheme, host=self._server.host, port=self._server.port
        )
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()
