"""How the crawler treats a host: at most `concurrency` requests in flight and `rate` request
starts per second, a User-Agent that names the tool, robots.txt obeyed, retries with
exponential backoff and jitter on connection errors, 429 and 5xx (a 429's or 503's
`Retry-After` waited out), and a host that keeps failing given up on with the reason.
"""

from __future__ import annotations

import asyncio
import email.utils
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TypeVar
from urllib.robotparser import RobotFileParser

import httpx
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception_type,
    stop_after_attempt,
    wait_exponential_jitter,
)

from core.cli import package_version

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
MAX_RETRY_AFTER_S = 120.0  # a server asking for longer is treated as failing
T = TypeVar("T")


def user_agent(contact: str | None = None) -> str:
    """`rag-retrieve/<version> (+<contact>)`: the tool, its version and where its user or
    its project can be reached (`RAG_FETCH_CONTACT`, else the package's own project URL)."""
    contact = contact or _project_url()
    return f"rag-retrieve/{package_version()}" + (f" (+{contact})" if contact else "")


def _project_url() -> str | None:
    from importlib.metadata import PackageNotFoundError, metadata

    try:
        meta = metadata("rag-retrieve")
    except PackageNotFoundError:
        return None
    urls = [u.split(",", 1)[-1].strip() for u in meta.get_all("Project-URL") or []]
    home = meta.json.get("home_page")
    return next(iter(urls), None) or (home if isinstance(home, str) else None)


@dataclass(frozen=True)
class Politeness:
    concurrency: int = 4
    rate: float = 2.0  # request starts per second
    connect_timeout_s: float = 10.0
    read_timeout_s: float = 30.0
    attempts: int = 4  # per request, the first included
    backoff_s: float = 1.0  # the first retry's wait, doubling, with jitter
    max_backoff_s: float = 30.0
    host_failures: int = 5  # consecutive failed pages after which the host is given up


class Retryable(Exception):
    """A status worth asking again (429, 5xx), with the wait the server asked for."""

    def __init__(self, status: int, retry_after_s: float | None) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status
        self.retry_after_s = retry_after_s


class HostGate:
    """Admission to one host: a semaphore for requests in flight and a minimum spacing of
    request starts (1 / rate), shared by every task of a crawl."""

    def __init__(self, politeness: Politeness) -> None:
        self._slots = asyncio.Semaphore(politeness.concurrency)
        self._spacing = 1.0 / politeness.rate if politeness.rate > 0 else 0.0
        self._next_start = 0.0
        self._lock = asyncio.Lock()
        self.failures = 0  # consecutive pages that failed

    async def __aenter__(self) -> HostGate:
        await self._slots.acquire()
        try:
            async with self._lock:
                wait = self._next_start - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
                self._next_start = max(time.monotonic(), self._next_start) + self._spacing
        except BaseException:
            self._slots.release()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._slots.release()


def retry_after(response: httpx.Response) -> float | None:
    """Seconds a `Retry-After` header asks for (delta-seconds or an HTTP date)."""
    value = response.headers.get("Retry-After")
    if not value:
        return None
    if value.strip().isdigit():
        return float(value.strip())
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


async def with_retries(politeness: Politeness, call: Callable[[], Awaitable[T]]) -> T:
    """`call()` until it succeeds or `attempts` are spent; between attempts the server's
    Retry-After if it gave one, else exponential backoff with jitter."""
    backoff = wait_exponential_jitter(
        multiplier=politeness.backoff_s, max=politeness.max_backoff_s, jitter=politeness.backoff_s
    )

    def wait(state: RetryCallState) -> float:
        error = state.outcome.exception() if state.outcome else None
        asked = error.retry_after_s if isinstance(error, Retryable) else None
        return min(asked, MAX_RETRY_AFTER_S) if asked is not None else backoff(state)

    retrying = AsyncRetrying(
        retry=retry_if_exception_type((Retryable, httpx.TransportError)),
        wait=wait,
        stop=stop_after_attempt(politeness.attempts),
        reraise=True,
    )
    async for attempt in retrying:
        with attempt:
            return await call()
    raise AssertionError("unreachable: tenacity re-raises the last error")


async def robots_for(client: httpx.AsyncClient, origin: str, agent: str) -> RobotFileParser:
    """The host's robots.txt, read once; none (404) allows everything, a server error
    forbids everything until the next run (RFC 9309, 2.3.1)."""
    robots = RobotFileParser()
    try:
        response = await client.get(f"{origin}/robots.txt", headers={"User-Agent": agent})
    except httpx.HTTPError:
        robots.parse([])
        return robots
    if response.status_code >= 500:
        robots.parse(["User-agent: *", "Disallow: /"])
    elif response.status_code == 200:
        robots.parse(response.text.splitlines())
    else:
        robots.parse([])
    return robots
