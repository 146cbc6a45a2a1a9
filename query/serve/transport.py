"""What every HTTP server of ours does the same way below its routes: a listening socket
bound before serving (port 0 = any free port, known before the first request), the URL a
client on this machine reaches it by, and a JSON request body read within limits.

The warm worker (query/serve/worker.py) and the embeddings server
(query/serve/embeddings.py) both stand on it; each answers a refusal in its own error shape.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import socket
from typing import Any

from fastapi import Request
from starlette.exceptions import HTTPException as StarletteHTTPException


class Refused(Exception):
    """A request refused before its route ran: `status` and the reason, in the message."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status = status
        self.headers = headers or {}


def listen(host: str, port: int, backlog: int) -> socket.socket:
    """A socket listening on (host, port): bound here rather than by uvicorn, so a caller
    knows the port (and a busy port fails) before serving starts."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP named, not 0: asyncio sets TCP_NODELAY only on connections whose socket
    # says TCP, and without it every answer on a keep-alive connection waited ~40 ms for
    # the client's delayed ACK (Nagle).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(backlog)
    except OSError:
        sock.close()
        raise
    return sock


def socket_url(sock: socket.socket) -> str:
    """Where a client on this machine reaches `sock` (a wildcard bind by loopback)."""
    host, port = sock.getsockname()[:2]
    address = ipaddress.ip_address(host)
    if address.is_unspecified:
        address = ipaddress.ip_address("::1" if address.version == 6 else "127.0.0.1")
    return f"http://{address}:{port}" if address.version == 4 else f"http://[{address}]:{port}"


async def read_json(request: Request, max_body_bytes: int, read_timeout_s: float) -> dict[str, Any]:
    """The request's body, a JSON object of at most `max_body_bytes` that arrived within
    `read_timeout_s`; Refused (411, 413, 408, 400, 415) otherwise."""
    # A browser sends a text/plain POST to any origin without asking first: JSON only.
    media_type = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if media_type != "application/json":
        raise Refused(415, f"the body must be application/json, not {media_type or 'untyped'}")
    length = request.headers.get("content-length")
    if length is None or not length.isdigit():
        raise Refused(411, "a JSON body with a Content-Length header is required")
    if int(length) > max_body_bytes:
        raise Refused(413, f"body over {max_body_bytes} bytes")

    async def collect() -> bytes:
        parts, size = [], 0
        async for part in request.stream():
            size += len(part)
            if size > max_body_bytes:
                raise Refused(413, f"body over {max_body_bytes} bytes")
            parts.append(part)
        return b"".join(parts)

    try:
        raw = await asyncio.wait_for(collect(), timeout=read_timeout_s)
    except TimeoutError:
        raise Refused(408, f"the body did not arrive within {read_timeout_s:g} s") from None
    try:
        body = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise Refused(400, f"invalid JSON: {exc}") from None
    except RecursionError:
        raise Refused(400, "invalid JSON: nested too deeply") from None
    if not isinstance(body, dict):
        raise Refused(400, f"the body must be a JSON object, got {type(body).__name__}")
    return body


def http_error_message(request: Request, exc: StarletteHTTPException) -> str:
    """What a server says for one of Starlette's own errors (an unknown path, a wrong method),
    in words that name the path rather than Starlette's bare "Not Found"."""
    if exc.status_code == 404:
        return f"no such path {request.url.path}"
    if exc.status_code == 405:
        return f"{request.method} is not allowed on {request.url.path}"
    return str(exc.detail)
