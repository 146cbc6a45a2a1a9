"""A DocC documentation root on the web, and where its pages are kept on disk.

A root is the URL a person opens: `https://developer.apple.com/documentation/swiftdata` (an
Apple framework or article) or `https://host/path/documentation/<module>` (any DocC site: a
package's docs on GitHub Pages, Swift Package Index, a company's internal docs). Its pages
are render JSON at the data path DocC's web app reads them from: Apple serves
`/tutorials/data/documentation/<path>.json`, a DocC site `/path/data/documentation/<path>.json`.

Pages are written under `<data>/sources/<host>/<the data path>` (so a fetched DocC site is a
DocC archive's `data/` tree, read like one), and each page's fetch record under
`<data>/sources/.fetch/<host>/<the data path>`: a folder an ingest of the pages never walks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

APPLE_HOSTS = frozenset({"developer.apple.com"})
APPLE_DATA_PREFIX = "/tutorials/data"
RECORDS = ".fetch"
_DOC_PATH = re.compile(r"^(?P<prefix>.*?)(?P<doc>/(?:documentation|tutorials)/.+?)/?$")


class SiteError(ValueError):
    """A URL that names no DocC documentation root (a usage error)."""


@dataclass(frozen=True)
class DocSite:
    """One documentation root and the site it is on."""

    origin: str  # scheme://host[:port]
    prefix: str  # where the site's /documentation starts ("" or "/path")
    data_prefix: str  # where its render JSON starts ("/tutorials/data" or "/path/data")
    root: str  # the root's documentation path, lowercased: /documentation/swiftdata

    @property
    def host(self) -> str:
        return urlsplit(self.origin).netloc

    @property
    def is_apple(self) -> bool:
        return urlsplit(self.origin).hostname in APPLE_HOSTS

    @property
    def base_url(self) -> str:
        """Where the site's pages open: the base a non-Apple page's URL is made from."""
        return self.origin + self.prefix

    @property
    def root_url(self) -> str:
        return self.page_url(self.root)

    def data_url(self, doc_path: str) -> str:
        return f"{self.origin}{self.data_prefix}{doc_path}.json"

    def page_url(self, doc_path: str) -> str:
        return f"{self.origin}{self.prefix}{doc_path}"

    def covers(self, doc_path: str) -> bool:
        """Whether a page is under the root (a framework's symbols and articles)."""
        path = doc_path.lower()
        return path == self.root or path.startswith(self.root + "/")

    def page_file(self, sources: Path, doc_path: str) -> Path:
        return sources / _safe(self.host) / _relative(self.data_prefix + doc_path + ".json")

    def record_file(self, sources: Path, doc_path: str) -> Path:
        return (
            sources / RECORDS / _safe(self.host) / _relative(self.data_prefix + doc_path + ".json")
        )

    def site_folder(self, sources: Path) -> Path:
        """The folder of the site's pages (every root fetched from it): what is ingested, so
        that a page's id is its path on the site, unique across roots."""
        return sources / _safe(self.host) / _relative(self.prefix)

    def records_folder(self, sources: Path) -> Path:
        """The folder of the fetch records of the site's pages."""
        return sources / RECORDS / _safe(self.host) / _relative(self.prefix)

    def crawl_file(self, sources: Path) -> Path:
        """The root's crawl state: when its last crawl started and whether it finished."""
        return (
            sources
            / RECORDS
            / _safe(self.host)
            / _relative(self.data_prefix + self.root + ".crawl")
        )


def doc_site(url: str) -> DocSite:
    """The documentation root a URL names; SiteError when it names none."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise SiteError(f"{url}: not an http(s) URL")
    path = parts.path
    if parts.hostname in APPLE_HOSTS and path.startswith(APPLE_DATA_PREFIX + "/"):
        path = path[len(APPLE_DATA_PREFIX) :].removesuffix(".json")
    match = _DOC_PATH.match(path)
    if match is None:
        raise SiteError(
            f"{url}: not a DocC documentation root (expected …/documentation/<name>, e.g. "
            "https://developer.apple.com/documentation/swiftdata)"
        )
    prefix, doc = match["prefix"], match["doc"].lower().removesuffix(".json")
    origin = f"{parts.scheme}://{parts.netloc}"
    if parts.hostname in APPLE_HOSTS:
        return DocSite(origin, "", APPLE_DATA_PREFIX, doc)
    if prefix.endswith("/data"):  # given the data URL of a DocC site
        prefix = prefix[: -len("/data")]
    return DocSite(origin, prefix, prefix + "/data", doc)


def _safe(host: str) -> str:
    return host.replace(":", "_")


def _relative(path: str) -> Path:
    """A URL path as a path under a folder: no leading slash, no `..` that could leave it."""
    parts = [p for p in path.split("/") if p and p not in (".", "..")]
    return Path(*parts)


def page_of(sites: list[DocSite], sources: Path, page_file: Path) -> tuple[DocSite, str] | None:
    """The site and documentation path of a fetched page's file, if one of `sites` wrote it."""
    for site in sites:
        folder = sources / _safe(site.host)
        try:
            relative = "/" + page_file.relative_to(folder).as_posix()
        except ValueError:
            continue
        if relative.startswith(site.data_prefix + "/") and relative.endswith(".json"):
            doc = relative[len(site.data_prefix) : -len(".json")]
            if site.covers(doc):
                return site, doc
    return None
