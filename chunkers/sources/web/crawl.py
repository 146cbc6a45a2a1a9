"""Fetching a DocC documentation root: its render JSON pages, following the topic references
that stay under the root, politely (chunkers/sources/web/polite.py) and resumably.

* A crawl writes each page whole (chunkers/sources/web/records.py) with its fetch record,
  and its state file says when it started and whether it finished. A crawl killed at any
  moment is resumed by the next run: a page written since the unfinished crawl started is
  not asked again (its references are read from the file), so the frontier is rebuilt from
  what is on disk.
* A root fetched again after a finished crawl is checked page by page with conditional
  requests (`If-None-Match`, `If-Modified-Since`): 304 keeps the file as it is (not even its
  mtime changes, so the ingest after it reads nothing); a new body replaces the page; 404 or
  410 removes it.
* A bad answer is a named reject (URL, reason) and the crawl goes on: a body that is not
  JSON (an HTML error page with a 200), JSON that is no DocC page, a body that breaks off, a
  redirect loop or one to another host. Nothing of it is written; the next run asks again.
* Only the root's host is contacted; a reference elsewhere is counted as a name.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import httpx

from chunkers.sources.published.docc_render import is_docc_page
from chunkers.sources.web.polite import (
    RETRY_STATUSES,
    HostGate,
    Politeness,
    Retryable,
    retry_after,
    robots_for,
    with_retries,
)
from chunkers.sources.web.records import (
    GONE,
    NOT_MODIFIED,
    OK,
    REJECTED,
    UNVERIFIED,
    CrawlState,
    FetchRecord,
    load_crawl,
    load_record,
    now,
    save_crawl,
    save_record,
    write_atomic,
)
from chunkers.sources.web.site import DocSite

MAX_REDIRECTS = 5
DEFAULT_MAX_PAGES = 5000

Progress = Callable[["CrawlReport"], None]


@dataclass
class CrawlReport:
    root: str
    started: str
    pages: int = 0  # pages of the root seen (on disk or fetched)
    requests: int = 0  # page requests made (robots.txt and retries not counted)
    downloaded: list[str] = field(default_factory=list)  # new or changed bodies written
    unchanged: list[str] = field(default_factory=list)  # 304, or the same body again
    resumed: int = 0  # pages an interrupted crawl had written, not asked again
    gone: list[str] = field(default_factory=list)
    rejected: list[tuple[str, str]] = field(default_factory=list)  # URL, reason
    unverified: list[tuple[str, str]] = field(default_factory=list)
    robots_disallowed: list[str] = field(default_factory=list)
    offsite: Counter[str] = field(default_factory=Counter)  # hosts named, never contacted
    truncated: bool = False  # --max-pages reached
    stopped: str | None = None  # why the host was given up
    seconds: float = 0.0

    @property
    def complete(self) -> bool:
        return self.stopped is None

    def to_dict(self) -> dict[str, object]:
        return {
            "root": self.root,
            "pages": self.pages,
            "requests": self.requests,
            "downloaded": len(self.downloaded),
            "unchanged": len(self.unchanged),
            "resumed": self.resumed,
            "gone": len(self.gone),
            "rejected": [{"url": u, "reason": r} for u, r in self.rejected],
            "unverified": [{"url": u, "reason": r} for u, r in self.unverified],
            "robots_disallowed": len(self.robots_disallowed),
            "offsite_hosts": dict(self.offsite),
            "truncated": self.truncated,
            "stopped": self.stopped,
            "seconds": round(self.seconds, 2),
        }


class _Refused(Exception):
    """An answer that is no page: a named reject."""


async def crawl(
    site: DocSite,
    sources: Path,
    politeness: Politeness,
    agent: str,
    *,
    max_pages: int = DEFAULT_MAX_PAGES,
    on_progress: Progress | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
) -> CrawlReport:
    """Fetch the root's pages into `sources`; the report of what each request did."""
    started_clock = time.monotonic()
    state_file = site.crawl_file(sources)
    state = load_crawl(state_file)
    resuming = state is not None and not state.complete
    if resuming:
        _drop_partial_writes(site, sources)
    if state is None or state.complete:
        state = CrawlState(started=datetime.now(UTC).isoformat())
        save_crawl(state_file, state)
    report = CrawlReport(site.root_url, state.started)
    since = datetime.fromisoformat(state.started).timestamp()
    async with _client(politeness, agent, transport) as client:
        robots = await robots_for(client, site.origin, agent)
        run = _Crawl(site, sources, politeness, agent, client, robots, report, since, resuming)
        await run.all(max_pages, on_progress)
    report.seconds = time.monotonic() - started_clock
    if report.complete:
        state.complete, state.pages = True, report.pages
        save_crawl(state_file, state)
    return report


async def revalidate(
    site: DocSite,
    sources: Path,
    politeness: Politeness,
    agent: str,
    docs: list[str],
    *,
    transport: httpx.AsyncBaseTransport | None = None,
) -> CrawlReport:
    """Ask each of these pages once, conditionally, following nothing (re-verification of
    the pages whose freshness window has passed); the same outcomes as a crawl's."""
    started_clock = time.monotonic()
    report = CrawlReport(site.root_url, now())
    async with _client(politeness, agent, transport) as client:
        robots = await robots_for(client, site.origin, agent)
        run = _Crawl(site, sources, politeness, agent, client, robots, report, 0.0, False)

        async def one(doc: str) -> None:
            if report.stopped is None:
                await run.page(doc)
            else:  # the host was given up: the page stays as it was, unverified
                report.unverified.append((site.data_url(doc), "not asked: " + report.stopped))

        await asyncio.gather(*(one(doc) for doc in docs))
    report.pages = len(docs)
    report.seconds = time.monotonic() - started_clock
    return report


def _client(
    politeness: Politeness, agent: str, transport: httpx.AsyncBaseTransport | None
) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        timeout=httpx.Timeout(politeness.read_timeout_s, connect=politeness.connect_timeout_s),
        limits=httpx.Limits(max_connections=politeness.concurrency),
        headers={"User-Agent": agent},
        follow_redirects=False,
        transport=transport,
    )


class _Crawl:
    def __init__(
        self,
        site: DocSite,
        sources: Path,
        politeness: Politeness,
        agent: str,
        client: httpx.AsyncClient,
        robots: object,
        report: CrawlReport,
        since: float,
        resuming: bool,
    ) -> None:
        self.site, self.sources, self.politeness = site, sources, politeness
        self.agent, self.client, self.robots = agent, client, robots
        self.report, self.since, self.resuming = report, since, resuming
        self.gate = HostGate(politeness)

    async def all(self, max_pages: int, on_progress: Progress | None) -> None:
        queue: asyncio.Queue[str] = asyncio.Queue()
        seen = {self.site.root}
        queue.put_nowait(self.site.root)

        async def worker() -> None:
            while True:
                doc = await queue.get()
                try:
                    if self.report.stopped is None:
                        for ref in await self._page_or_failure(doc):
                            if ref in seen:
                                continue
                            if len(seen) >= max_pages:
                                self.report.truncated = True
                                continue
                            seen.add(ref)
                            queue.put_nowait(ref)
                        if on_progress is not None:
                            on_progress(self.report)
                finally:
                    queue.task_done()

        workers = [asyncio.create_task(worker()) for _ in range(self.politeness.concurrency)]
        try:
            await queue.join()
        finally:
            for task in workers:
                task.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
        self.report.pages = len(seen)

    async def _page_or_failure(self, doc: str) -> list[str]:
        """`page(doc)`, with anything it did not foresee (a full disk, a bug) recorded as the
        page's failure: a worker that died would leave the queue waiting forever."""
        try:
            return await self.page(doc)
        except Exception as exc:
            self.report.unverified.append((self.site.data_url(doc), f"{type(exc).__name__}: {exc}"))
            return []

    async def page(self, doc: str) -> list[str]:
        """Fetch (or reuse) one page; the pages under the root it references."""
        page_file = self.site.page_file(self.sources, doc)
        record_file = self.site.record_file(self.sources, doc)
        record = load_record(record_file)
        if self.resuming and self._written_since(page_file, record):
            self.report.resumed += 1
            return self._references(_read_json(page_file))
        url = self.site.data_url(doc)
        if not self.robots.can_fetch(self.agent, url):  # type: ignore[attr-defined]
            self.report.robots_disallowed.append(url)
            return []
        headers: dict[str, str] = {}
        if record is not None and page_file.is_file():
            if record.etag:
                headers["If-None-Match"] = record.etag
            if record.last_modified:
                headers["If-Modified-Since"] = record.last_modified
        self.report.requests += 1
        fresh = FetchRecord(url=url, page_url=self.site.page_url(doc), status=UNVERIFIED)
        try:
            response = await with_retries(self.politeness, lambda: self._get(url, headers))
        except (Retryable, httpx.TransportError) as exc:
            reason = _failure(exc)
            if isinstance(exc, httpx.RemoteProtocolError):
                return self._reject(url, f"the body broke off ({exc})", record, record_file)
            self.report.unverified.append((url, reason))
            self._failed(reason)
            fresh.reason = reason
            _keep_validators(fresh, record)
            save_record(record_file, fresh)
            return self._references(_read_json(page_file)) if page_file.is_file() else []
        except _Refused as exc:
            self.gate.failures = 0
            return self._reject(url, str(exc), record, record_file)
        self.gate.failures = 0
        fresh.http_status = response.status_code
        fresh.final_url = str(response.url)
        if response.status_code == 304 and page_file.is_file():
            _keep_validators(fresh, record)
            fresh.status, fresh.verified_at = NOT_MODIFIED, now()
            fresh.etag = response.headers.get("ETag") or fresh.etag
            save_record(record_file, fresh)
            self.report.unchanged.append(doc)
            return self._references(_read_json(page_file))
        if response.status_code in (404, 410):
            page_file.unlink(missing_ok=True)
            fresh.status, fresh.reason = GONE, f"HTTP {response.status_code}"
            save_record(record_file, fresh)
            self.report.gone.append(doc)
            return []
        if response.status_code != 200:
            return self._reject(url, f"HTTP {response.status_code}", record, record_file)
        try:
            value = _page_json(response)
        except _Refused as exc:
            return self._reject(url, str(exc), record, record_file)
        body = response.content
        if page_file.is_file() and page_file.read_bytes() == body:
            self.report.unchanged.append(doc)
            fresh.fetched_at = record.fetched_at if record else now()
        else:
            write_atomic(page_file, body)
            self.report.downloaded.append(doc)
            fresh.fetched_at = now()
        fresh.status, fresh.verified_at = OK, now()
        fresh.etag = response.headers.get("ETag")
        fresh.last_modified = response.headers.get("Last-Modified")
        save_record(record_file, fresh)
        return self._references(value)

    async def _get(self, url: str, headers: dict[str, str]) -> httpx.Response:
        """GET with redirects followed by hand: on the root's host only, at most
        MAX_REDIRECTS, never in a loop. A 429 or 5xx raises Retryable."""
        visited = {url}
        async with self.gate:
            response = await self.client.get(url, headers=headers)
            for _ in range(MAX_REDIRECTS):
                if not response.has_redirect_location:
                    break
                target = urljoin(str(response.url), response.headers.get("Location", ""))
                if urlsplit(target).netloc != self.site.host:
                    host = urlsplit(target).netloc
                    self.report.offsite[host] += 1
                    raise _Refused(f"redirects to another host ({host}); not followed")
                if target in visited:
                    raise _Refused(f"redirect loop at {target}")
                visited.add(target)
                response = await self.client.get(target, headers=headers)
            else:
                raise _Refused(f"more than {MAX_REDIRECTS} redirects")
        if response.status_code in RETRY_STATUSES:
            raise Retryable(response.status_code, retry_after(response))
        return response

    def _references(self, page: object) -> list[str]:
        """The pages under the root that a page's topic references name; references to
        other hosts are counted as names."""
        refs = page.get("references") if isinstance(page, dict) else None
        out: list[str] = []
        for ref in (refs or {}).values() if isinstance(refs, dict) else []:
            if not isinstance(ref, dict):
                continue
            url = ref.get("url")
            if ref.get("type") == "link" and isinstance(url, str) and "://" in url:
                host = urlsplit(url).netloc
                if host and host != self.site.host:
                    self.report.offsite[host] += 1
                continue
            if ref.get("type") == "topic" and isinstance(url, str) and url.startswith("/"):
                path = urlsplit(url).path.lower().rstrip("/")
                if self.site.covers(path):
                    out.append(path)
        return out

    def _written_since(self, page_file: Path, record: FetchRecord | None) -> bool:
        """Whether the unfinished crawl already wrote or confirmed this page: its record
        says so, or (killed between the page and its record) the file is newer than the
        crawl's start."""
        if not page_file.is_file():
            return False
        verified = record.verified_at if record is not None else None
        if verified and datetime.fromisoformat(verified).timestamp() >= self.since:
            return True
        return page_file.stat().st_mtime >= self.since

    def _reject(
        self, url: str, reason: str, record: FetchRecord | None, record_file: Path
    ) -> list[str]:
        self.report.rejected.append((url, reason))
        rejected = FetchRecord(url=url, page_url="", status=REJECTED, reason=reason)
        if record is not None:
            rejected.page_url = record.page_url
            _keep_validators(rejected, record)
        save_record(record_file, rejected)
        return []

    def _failed(self, reason: str) -> None:
        self.gate.failures += 1
        if self.gate.failures >= self.politeness.host_failures and self.report.stopped is None:
            self.report.stopped = (
                f"{self.site.host} failed {self.gate.failures} pages in a row (last: {reason}); "
                "what was fetched is kept, run fetch again to resume"
            )


def _drop_partial_writes(site: DocSite, sources: Path) -> None:
    """Temporary files a killed crawl left half-written (records.write_atomic): never pages."""
    for folder in (site.site_folder(sources), site.records_folder(sources)):
        if folder.is_dir():
            for leftover in folder.rglob(".*.part"):
                leftover.unlink(missing_ok=True)


def _keep_validators(record: FetchRecord, previous: FetchRecord | None) -> None:
    """A request that did not replace the page keeps what is known of the page on disk."""
    if previous is not None and previous.status in (OK, NOT_MODIFIED):
        record.etag, record.last_modified = previous.etag, previous.last_modified
        record.fetched_at, record.verified_at = previous.fetched_at, previous.verified_at


def _page_json(response: httpx.Response) -> dict[str, object]:
    kind = response.headers.get("Content-Type", "")
    try:
        value = json.loads(response.content)
    except ValueError as exc:
        what = "an HTML page" if "html" in kind else "not JSON"
        raise _Refused(f"{what}, not a render JSON page ({kind or 'no content type'})") from exc
    if not is_docc_page(value):
        raise _Refused("JSON that is not a DocC page (no doc:// identifier or metadata)")
    return value


def _read_json(path: Path) -> object:
    try:
        return json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None


def _failure(exc: BaseException) -> str:
    if isinstance(exc, Retryable):
        return f"HTTP {exc.status}, still after retries"
    if isinstance(exc, httpx.TimeoutException):
        return f"timed out ({type(exc).__name__})"
    return f"{type(exc).__name__}: {exc}"
