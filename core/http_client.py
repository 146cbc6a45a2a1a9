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
"""

from __future__ import annotations

import functools
import json
import ssl
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Literal

import httpx

MAX_REPLY_BYTES = 64 * 1024 * 1024
_MAX_ERROR_BODY = 64 * 1024  # enough for any explanation; the rest of a page is noise
_MAX_DETAIL = 300
_SNIPPET = 120
_KEEPALIVE_S = 2.0

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

    def __init__(self, *, max_reply_bytes: int = MAX_REPLY_BYTES) -> None:
        self.max_reply_bytes = max_reply_bytes
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
        late = ServiceError(
            f"{url} did not answer within {timeout_s:g}s",
            url=url,
            kind="timeout",
            detail=f"no reply within {timeout_s:g}s",
        )
        headers = {"Accept": "application/json"}
        if content is not None:
            headers["Content-Type"] = "application/json"
        with (
            _transport_errors(url, late),
            self._http.stream(
                method, url, content=content, headers=headers, timeout=timeout_s
            ) as response,
        ):
            # 3xx included: httpx follows no redirect, and a moved API is a setting to fix.
            if not response.is_success:
                body, _ = _read(response, _MAX_ERROR_BODY, deadline, late)
                detail = error_detail(body, response.reason_phrase)
                raise ServiceError(
                    f"{url} answered HTTP {response.status_code}: {detail[:_MAX_DETAIL]}",
                    url=url,
                    kind="http",
                    detail=detail,
                    status=response.status_code,
                )
            body, complete = _read(response, self.max_reply_bytes, deadline, late)
        if not complete:
            raise _bad_response(url, f"more than {self.max_reply_bytes} bytes")
        try:
            return json.loads(body)
        except ValueError:  # UnicodeDecodeError included
            raise _bad_response(url, f"invalid JSON: {body[:_SNIPPET]!r}") from None

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> JSONClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def post_json(url: str, payload: Any, *, timeout_s: float) -> Any:
    """One POST on a client of its own, for callers that make a single call."""
    with JSONClient() as client:
        return client.post(url, payload, timeout_s=timeout_s)


def get_json(url: str, *, timeout_s: float) -> Any:
    """One GET on a client of its own."""
    with JSONClient() as client:
        return client.get(url, timeout_s=timeout_s)


@functools.cache
def _system_tls() -> ssl.SSLContext:
    # Loading a trust store takes tens of milliseconds: once per process, not per client.
    return ssl.create_default_context()


def _read(
    response: httpx.Response, limit: int, deadline: float, late: ServiceError
) -> tuple[bytes, bool]:
    """The body, and False if it went past `limit` (then only its first `limit` bytes)."""
    pieces: list[bytes] = []
    size = 0
    for piece in response.iter_bytes():
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


def _unreachable(url: str, exc: Exception) -> ServiceError:
    return ServiceError(
        f"{url} is unreachable: {exc}", url=url, kind="unreachable", detail=str(exc)
    )


def _bad_response(url: str, detail: str) -> ServiceError:
    return ServiceError(f"{url} returned {detail}", url=url, kind="bad_response", detail=detail)
