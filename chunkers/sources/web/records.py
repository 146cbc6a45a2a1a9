"""What is known of each fetched page, kept beside the pages (chunkers/sources/web/site.py):
the URL asked, where it ended after redirects, the validators the server gave (ETag,
Last-Modified), when it was fetched and last verified, and how the last request ended.

This is the project's own validator store rather than an RFC 9111 cache (hishel): the pages
are already kept as files for ingestion, so a cache would hold every body twice, and a cache
decides freshness by the server's max-age, while refresh and re-verification ask on their own
schedule and must know, page by page, that a request was made and what it answered.

Every file is written whole (temporary file, then rename), so a kill never leaves half a
record or half a page, and the crawl's frontier is rebuilt from what is on disk.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

# How the last request for a page ended.
OK = "ok"  # 200: the body is the page on disk
NOT_MODIFIED = "not_modified"  # 304: the page on disk is current
REJECTED = "rejected"  # an answer that is no page (reason says why); asked again next run
GONE = "gone"  # 404/410: the page is removed
UNVERIFIED = "unverified"  # no answer (transport failure, a host that kept failing)


@dataclass
class FetchRecord:
    url: str  # the render JSON URL asked
    page_url: str  # the URL a person opens
    status: str
    final_url: str | None = None
    etag: str | None = None
    last_modified: str | None = None
    fetched_at: str | None = None  # when the body on disk was downloaded
    verified_at: str | None = None  # when the server last confirmed it (200 or 304)
    http_status: int | None = None
    reason: str | None = None

    def to_json(self) -> dict[str, object]:
        return asdict(self)


@dataclass
class CrawlState:
    """A root's crawl: when the current one started, and whether it finished."""

    started: str
    complete: bool = False
    pages: int = 0


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def load_record(path: Path) -> FetchRecord | None:
    try:
        return FetchRecord(**json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return None  # no record, or one from another version: the page is asked again


def save_record(path: Path, record: FetchRecord) -> None:
    write_atomic(path, json.dumps(record.to_json(), indent=1, sort_keys=True).encode())


def load_crawl(path: Path) -> CrawlState | None:
    try:
        return CrawlState(**json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return None


def save_crawl(path: Path, state: CrawlState) -> None:
    write_atomic(path, json.dumps(asdict(state), sort_keys=True).encode())


def write_atomic(path: Path, data: bytes) -> None:
    """`data` at `path`, whole or not at all: written beside it, flushed, then renamed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
