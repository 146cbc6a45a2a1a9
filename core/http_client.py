"""JSON over HTTP for every service we call: embedding and chat endpoints, rerankers, the
query worker.

`JSONClient.post(url, payload, timeout_s=...)` sends one JSON POST and returns the decoded
JSON reply. Whatever keeps a usable reply from arriving raises `ServiceError`, whose `kind`
says what happened and whose message names the URL and the service's own explanation:

- "unreachable": no connection could be made (refused, unknown host, bad URL);
- "dropped": the connection broke after it was made;
- "timeout": no complete reply within `timeout_s`;
- "http": an error status (`status`, and `detail` as the service put it);
- "bad_response": a reply that is not JSON, or larger than the client accepts.

`timeout_s` is a deadline for the whole exchange, not only for each socket operation: the
body is read in pieces and the clock is checked between them, so a server that trickles
bytes costs at most `timeout_s` plus one socket read (itself bounded by `timeout_s`).

Error bodies come in the shapes OpenAI-compatible services use: OpenAI's
`{"error": {"message": ...}}`, a bare `{"error": "..."}` (TEI, Ollama, our worker), or text.

`post_json` and `get_json` make one call on a connection of their own, with the same
errors. They are what `python -m query` asks a running worker with, where the process's
start is what the user waits for, so they use the standard library's http.client: importing
httpx costs ~95 ms in a fresh process (~60 ms more than the settings already pay; its
package imports its command line's rich, pygments and click), http.client ~20 ms (~2 ms
after the settings), measured with `python -X importtime` on 2026-11-25. They connect
directly, ignoring HTTP_PROXY and the like (httpx honours them): the worker listens on
loopback, which a proxy would not reach. httpx, imported with the first JSONClient, keeps
what long-lived callers need: a pool shared by threads.
"""

from __future__ import annotations

import functools
import http.client
import json
import ssl
import time
import urllib.parse
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Literal

MAX_REPLY_BYTES = 64 * 1024 * 1024
_MAX_ERROR_BODY = 64 * 1024  # enough for any explanation; the rest of a page is noise
_MAX_DETAIL = 300
_SNIPPET = 120
_KEEPALIVE_S = 2.0
_PIECE = 64 * 1024

Kind = Literal["unreachable", "dropped", "timeout", "http", "bad_response"]


class ServiceError(RuntimeError):
    """A service gave no usable reply; `kind` says why (see the module docstring)."""

    def __init__(
        self, message: str, *, url: str, kind: Kind, detail: str, status: int | None = None
    ) -> None:
        super().__init__(message)
        self.url = url
        self.kind = kind
        # In full, for callers that relay it; the message carries a shortened copy.
        self.detail = detail
        self.status = status


def error_detail(body: bytes, reason: str = "") -> str:
    """The service's own explanation in an error reply; the reason phrase if the body says
    nothing."""
    text = body.decode("utf-8", "replace")
    try:
        err = json.loads(text).get("error")
        message = err.get("message") if isinstance(err, dict) else err
        if message:
            return str(message)
    except (ValueError, AttributeError):
        pass
    return text.strip() or reason or "no detail"


class JSONClient:
    """POSTs JSON over one connection pool, safe to share between threads. Close it (or use
    it as a context manager) when done."""

    def __init__(
        self, *, max_reply_bytes: int = MAX_REPLY_BYTES, headers: Mapping[str, str] | None = None
    ) -> None:
        """`headers` go with every request besides the JSON ones (an Authorization header,
        say: `bearer(token)`)."""
        import httpx

        self.max_reply_bytes = max_reply_bytes
        self._extra = dict(headers or {})
        # The machine's trust store: certifi (httpx's default) would reject an in-house CA
        # that the machine trusts, which the standard library always accepted.
        self._http = httpx.Client(
            verify=_system_tls(),
            # Idle connections are let go well before uvicorn's 5 s keep-alive (vLLM, our
            # worker) ends them, so a pooled connection is not reused just as the server
            # closes it: that would fail the call as a dropped connection.
            limits=httpx.Limits(keepalive_expiry=_KEEPALIVE_S),
        )

    def post(self, url: str, payload: Any, *, timeout_s: float) -> Any:
        """The decoded JSON reply to `payload` POSTed to `url`; ServiceError otherwise."""
        # Not httpx's json=, which refuses NaN and sends non-ASCII raw: services keep getting
        # the ASCII-escaped JSON they always got.
        return self._exchange("POST", url, json.dumps(payload).encode("utf-8"), timeout_s)

    def get(self, url: str, *, timeout_s: float) -> Any:
        """The decoded JSON reply to a GET of `url`; ServiceError otherwise."""
        return self._exchange("GET", url, None, timeout_s)

    def _exchange(self, method: str, url: str, content: bytes | None, timeout_s: float) -> Any:
        deadline = time.monotonic() + timeout_s
        late = _late(url, timeout_s)
        with (
            _transport_errors(url, late),
            self._http.stream(
                method,
                url,
                content=content,
                headers={**_headers(content), **self._extra},
                timeout=timeout_s,
            ) as response,
        ):
            return _reply(
                url,
                response.status_code,
                response.reason_phrase,
                response.iter_bytes(),
                self.max_reply_bytes,
                deadline,
                late,
            )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> JSONClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def post_json(
    url: str, payload: Any, *, timeout_s: float, headers: Mapping[str, str] | None = None
) -> Any:
    """One POST on a connection of its own, for callers that make a single call; `headers`
    are sent besides the JSON ones (an Authorization header, say)."""
    return _once("POST", url, json.dumps(payload).encode("utf-8"), timeout_s, headers)


def get_json(url: str, *, timeout_s: float, headers: Mapping[str, str] | None = None) -> Any:
    """One GET on a connection of its own."""
    return _once("GET", url, None, timeout_s, headers)


def bearer(token: str | None) -> dict[str, str]:
    """The Authorization header that carries `token`; none without one."""
    return {"Authorization": f"Bearer {token}"} if token else {}


def _once(
    method: str,
    url: str,
    content: bytes | None,
    timeout_s: float,
    extra: Mapping[str, str] | None = None,
) -> Any:
    deadline = time.monotonic() + timeout_s
    late = _late(url, timeout_s)
    connection = _connect(url, timeout_s, late)
    try:
        with _socket_errors(url, late):
            # Identity: httpx decodes gzip and deflate, this reads bodies as they come.
            headers = {**_headers(content), "Accept-Encoding": "identity", **(extra or {})}
            connection.request(method, _target(url), body=content, headers=headers)
            response = connection.getresponse()
            # A server that compresses although asked not to sent what this cannot read.
            encoding = response.getheader("Content-Encoding", "identity").strip().lower()
            if encoding not in ("", "identity"):
                raise _bad_response(url, f"a body that cannot be decoded: {encoding}")
            return _reply(
                url,
                response.status,
                response.reason,
                iter(lambda: response.read1(_PIECE), b""),
                MAX_REPLY_BYTES,
                deadline,
                late,
            )
    finally:
        connection.close()


def _connect(url: str, timeout_s: float, late: ServiceError) -> http.client.HTTPConnection:
    """An open connection to the host of `url`; ServiceError (unreachable, timeout) if none."""
    try:
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {url!r}")
        connection: http.client.HTTPConnection
        if parts.scheme == "https":
            connection = http.client.HTTPSConnection(
                parts.hostname, parts.port, timeout=timeout_s, context=_system_tls()
            )
        else:
            connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout_s)
    except (ValueError, http.client.InvalidURL) as exc:  # a port that is not a number included
        raise _unreachable(url, exc) from None
    try:
        connection.connect()
    except TimeoutError:
        connection.close()
        raise late from None
    except OSError as exc:  # refused, unknown host, a TLS handshake that fails
        connection.close()
        raise _unreachable(url, exc) from exc
    return connection


def _target(url: str) -> str:
    parts = urllib.parse.urlsplit(url)
    return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


def _headers(content: bytes | None) -> dict[str, str]:
    headers = {"Accept": "application/json"}
    if content is not None:
        headers["Content-Type"] = "application/json"
    return headers


@contextmanager
def _socket_errors(url: str, late: ServiceError) -> Iterator[None]:
    """http.client's exceptions, once connected, as ServiceError kinds."""
    try:
        yield
    except TimeoutError as exc:
        raise late from exc
    except (OSError, http.client.HTTPException) as exc:  # reset, closed early, a bad reply
        raise ServiceError(
            f"{url} dropped the connection: {exc}", url=url, kind="dropped", detail=str(exc)
        ) from exc


@functools.cache
def _system_tls() -> ssl.SSLContext:
    # Loading a trust store takes tens of milliseconds: once per process, not per client.
    return ssl.create_default_context()


def _reply(
    url: str,
    status: int,
    reason: str,
    body_pieces: Iterable[bytes],
    limit: int,
    deadline: float,
    late: ServiceError,
) -> Any:
    """The decoded JSON of a reply whose status line has arrived; ServiceError otherwise."""
    # 3xx included: neither client follows a redirect, and a moved API is a setting to fix.
    if not 200 <= status < 300:
        body, _ = _read(body_pieces, _MAX_ERROR_BODY, deadline, late)
        detail = error_detail(body, reason)
        raise ServiceError(
            f"{url} answered HTTP {status}: {detail[:_MAX_DETAIL]}",
            url=url,
            kind="http",
            detail=detail,
            status=status,
        )
    body, complete = _read(body_pieces, limit, deadline, late)
    if not complete:
        raise _bad_response(url, f"more than {limit} bytes")
    try:
        return json.loads(body)
    except ValueError:  # UnicodeDecodeError included
        raise _bad_response(url, f"invalid JSON: {body[:_SNIPPET]!r}") from None


def _read(
    body_pieces: Iterable[bytes], limit: int, deadline: float, late: ServiceError
) -> tuple[bytes, bool]:
    """The body, and False if it went past `limit` (then only its first `limit` bytes)."""
    pieces: list[bytes] = []
    size = 0
    for piece in body_pieces:
        if time.monotonic() > deadline:
            raise late
        pieces.append(piece)
        size += len(piece)
        if size > limit:
            return b"".join(pieces)[:limit], False
    if time.monotonic() > deadline:
        raise late
    return b"".join(pieces), True


@contextmanager
def _transport_errors(url: str, late: ServiceError) -> Iterator[None]:
    """httpx's exceptions as ServiceError kinds."""
    import httpx

    try:
        yield
    except httpx.TimeoutException as exc:
        raise late from exc
    except (httpx.ConnectError, httpx.UnsupportedProtocol, httpx.ProxyError) as exc:
        raise _unreachable(url, exc) from exc
    except httpx.InvalidURL as exc:  # not a TransportError: raised before any connection
        raise _unreachable(url, exc) from exc
    except httpx.DecodingError as exc:  # a Content-Encoding the body does not match
        raise _bad_response(url, f"a body that cannot be decoded: {exc}") from exc
    except httpx.TransportError as exc:
        raise ServiceError(
            f"{url} dropped the connection: {exc}", url=url, kind="dropped", detail=str(exc)
        ) from exc


def _late(url: str, timeout_s: float) -> ServiceError:
    return ServiceError(
        f"{url} did not answer within {timeout_s:g}s",
        url=url,
        kind="timeout",
        detail=f"no reply within {timeout_s:g}s",
    )


def _unreachable(url: str, exc: Exception) -> ServiceError:
    return ServiceError(
        f"{url} is unreachable: {exc}", url=url, kind="unreachable", detail=str(exc)
    )


def _bad_response(url: str, detail: str) -> ServiceError:
    return ServiceError(f"{url} returned {detail}", url=url, kind="bad_response", detail=detail)
