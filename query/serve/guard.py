"""Who may talk to a local server: one guard in front of every HTTP route of `serve`,
`mcp --http` (the worker's routes and /mcp alike) and `embeddings-server`.

A retrieval server holds the user's private code, and a web page in the user's browser can
reach loopback: after DNS rebinding its host name resolves to 127.0.0.1, and the browser
sends "simple" requests (a POST with a text/plain body) without asking first. So:

- a `Host` that is not loopback's (`localhost`, 127.0.0.1, [::1]; with any port), the bound
  address, or one the user allowed (RAG_ALLOWED_HOSTS) is refused with 421; `*` (any host)
  is refused without a token, since it leaves nothing between a rebound page and the data;
- a request carrying an `Origin` the user did not allow (RAG_ALLOWED_ORIGINS, empty by
  default) is refused with 403; no CORS headers are ever sent, so a browser shows no page
  the answer;
- with a token (RAG_AUTH_TOKEN or --token-file), every route but the bare liveness probe
  (`GET /live`) needs `Authorization: Bearer <token>` (401 otherwise; compared in constant
  time);
- a body that is not `application/json` is refused with 415 on every route (/retrieve and
  /mcp alike): a browser sends a text/plain POST anywhere without asking first;
- binding anywhere but loopback without a token is refused (`check_bind`).

Other processes of the same user are not kept out without a token: they can read the
user's files anyway. One small ASGI middleware of ours rather than Starlette's
TrustedHostMiddleware: that one answers 400 and knows neither Origin nor tokens, and the
three checks belong together in front of both apps.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send

from core.settings import Settings
from query.errors import UsageError

LIVENESS_PATH = "/live"
# Methods whose request carries a body the routes read.
WITH_BODY = frozenset({"POST", "PUT", "PATCH"})
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})


def is_loopback(host: str) -> bool:
    """Whether binding to `host` keeps the server on this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def read_token_file(path: Path) -> str:
    """The token in `path`, which only its owner may read (mode 0600 or stricter)."""
    try:
        mode = path.stat().st_mode
        token = path.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise UsageError(f"--token-file {path}: {exc.strerror or exc}") from None
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise UsageError(
            f"--token-file {path}: readable by others (mode {stat.S_IMODE(mode):04o}); "
            f"chmod 600 {path}"
        )
    if not token:
        raise UsageError(f"--token-file {path}: empty")
    return token


@dataclass(frozen=True)
class Access:
    """What the guard lets through: Host names, browser origins, and the token if any."""

    hosts: frozenset[str]
    any_host: bool
    origins: frozenset[str]
    token: str | None

    @classmethod
    def for_server(cls, bind: str, settings: Settings, token: str | None = None) -> Access:
        """The access of a server bound to `bind`: `token` (from --token-file) or the
        settings' one, loopback's names, the bound address and the user's allowed names.
        Any host (`*`) without a token is a usage error (exit 2)."""
        token = token or settings.bearer_token
        extra = _listed(settings.allowed_hosts)
        if "*" in extra and not token:
            raise UsageError(
                "RAG_ALLOWED_HOSTS='*' answers any Host, which lets a web page reach the server "
                "through DNS rebinding unless a token is required: set RAG_AUTH_TOKEN or pass "
                "--token-file PATH, or list the host names instead of '*'"
            )
        hosts = {*LOOPBACK_NAMES, bind.strip("[]").lower(), *(h for h in extra if h != "*")}
        origins = frozenset(o.rstrip("/") for o in _listed(settings.allowed_origins))
        return cls(frozenset(hosts), "*" in extra, origins, token)


def check_bind(bind: str, access: Access, insecure_no_token: bool) -> None:
    """Refuse to serve beyond loopback without a token (a usage error: exit 2)."""
    if is_loopback(bind) or access.token or insecure_no_token:
        return
    raise UsageError(
        f"--host {bind} is reachable from other machines: set RAG_AUTH_TOKEN or pass "
        "--token-file PATH (or --insecure-no-token to serve anyone who can connect)"
    )


def plain_error(status: int, message: str) -> dict[str, Any]:
    """A refusal's body as the worker and MCP server answer it: `{"error": message}`."""
    return {"error": message}


class LocalGuard:
    """ASGI middleware: Host, Origin and token checks before any route runs. `error_body`
    shapes a refusal's JSON as the routes behind it answer errors."""

    def __init__(
        self,
        app: ASGIApp,
        access: Access,
        error_body: Callable[[int, str], dict[str, Any]] = plain_error,
    ) -> None:
        self.app = app
        self.access = access
        self.error_body = error_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        refusal = self.refusal(scope)
        if refusal is None:
            await self.app(scope, receive, send)
            return
        status, message, headers = refusal
        if scope["type"] == "websocket":  # no route speaks it; refused all the same
            await send({"type": "websocket.close", "code": 1008, "reason": message[:120]})
            return
        body = json.dumps(self.error_body(status, message)).encode()
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    *headers,
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})

    def refusal(self, scope: Scope) -> tuple[int, str, list[tuple[bytes, bytes]]] | None:
        """(status, message, extra headers) of a request that may not pass, else None."""
        headers = _headers(scope)
        host = _hostname(headers.get("host", ""))
        if not self.access.any_host and host not in self.access.hosts:
            return (
                421,
                f"this server does not answer for host {host or '(none)'!r} "
                "(its RAG_ALLOWED_HOSTS may list it)",
                [],
            )
        origin = headers.get("origin")
        if origin is not None and origin.rstrip("/").lower() not in self.access.origins:
            return 403, f"requests from origin {origin!r} are not allowed", []
        token = self.access.token
        if token is not None and scope.get("path") != LIVENESS_PATH:
            given = headers.get("authorization", "")
            scheme, _, credential = given.partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(
                credential.strip().encode(), token.encode()
            ):
                challenge = [(b"www-authenticate", b'Bearer realm="rag-retrieve"')]
                return 401, "a valid 'Authorization: Bearer <token>' header is required", challenge
        media_type = headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if scope.get("method") in WITH_BODY and media_type != "application/json":
            shown = media_type or "untyped"
            return 415, f"the body must be application/json, not {shown}", []
        return None


def _headers(scope: Scope) -> dict[str, str]:
    # A repeated header counts once, its last value: none of these may be repeated legally.
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}


def _hostname(host: str) -> str:
    """The name in a Host header, without its port: `[::1]:8765` -> `::1`."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _listed(value: str) -> list[str]:
    return [item.strip().lower() for item in value.split(",") if item.strip()]
