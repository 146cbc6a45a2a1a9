"""The fetch flow: crawl DocC documentation roots from the web (chunkers/sources/web/), then
ingest what was fetched. A deployment of it (flows.serve) lets a backfill of Apple's docs be
started from the Prefect UI with typed parameters."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from prefect import flow, get_run_logger, task
from prefect.artifacts import create_markdown_artifact

from chunkers.sources.web.crawl import DEFAULT_MAX_PAGES, CrawlReport, crawl
from chunkers.sources.web.polite import Politeness, user_agent
from chunkers.sources.web.site import DocSite, doc_site
from core.settings import Settings
from flows.corpora import Corpus
from flows.ingest_flow import ingest_flow
from flows.run_report import artifact_key
from loaders.target import IngestTarget


def fetch_root(
    site: DocSite, settings: Settings, politeness: Politeness, max_pages: int
) -> CrawlReport:
    """One root's crawl into the settings' sources folder, with progress in the log."""
    log = _logger()
    last = [0.0]

    def progress(report: CrawlReport) -> None:
        if time.monotonic() - last[0] >= 5.0:
            last[0] = time.monotonic()
            log(
                f"fetch {site.root_url}: {len(report.downloaded)} downloaded, "
                f"{len(report.unchanged)} unchanged, {report.resumed} resumed, "
                f"{len(report.rejected)} rejected, {report.requests} requests"
            )

    return asyncio.run(
        crawl(
            site,
            settings.sources_dir,
            politeness,
            user_agent(settings.fetch_contact),
            max_pages=max_pages,
            on_progress=progress,
        )
    )


@task(name="fetch root")
def fetch_root_task(
    site: DocSite, settings: Settings, politeness: Politeness, max_pages: int
) -> CrawlReport:
    return fetch_root(site, settings, politeness, max_pages)


@flow(name="fetch", log_prints=True)
def fetch_flow(
    urls: list[str],
    index: str = "default",
    store: str | None = None,
    max_pages: int = DEFAULT_MAX_PAGES,
    concurrency: int = 4,
    rate: float = 2.0,
    ingest: bool = True,
    defer_vectors: bool = False,
) -> dict[str, Any]:
    """Fetch each DocC documentation root (a developer.apple.com framework or article, or any
    DocC site's …/documentation/<module>) and ingest its pages into `index`. A second run
    asks each page with a conditional request and re-ingests only what changed."""
    settings = Settings.from_env()
    politeness = Politeness(concurrency=concurrency, rate=rate)
    sites = [doc_site(url) for url in urls]
    reports = [fetch_root_task(site, settings, politeness, max_pages) for site in sites]
    result: dict[str, Any] = {"fetch": [r.to_dict() for r in reports], "ingest": []}
    if ingest:
        for site in dict.fromkeys(sites):
            target = IngestTarget(
                index,
                store,
                defer_vectors=defer_vectors,
                docc_base_url=None if site.is_apple else site.base_url,
            )
            folder = site.site_folder(settings.sources_dir)
            if folder.is_dir():
                result["ingest"].append(ingest_flow(paths=[str(folder)], target=target))
    create_markdown_artifact(
        key=artifact_key(f"fetch-{index}"),
        markdown=fetch_markdown(reports),
        description=f"Fetch of {len(reports)} root(s) for index {index}",
    )
    return result


def politeness_of(corpus: Corpus) -> Politeness:
    """A docc corpus's politeness."""
    return Politeness(concurrency=corpus.concurrency, rate=corpus.rate)


def fetch_counts(report: CrawlReport, prefix: str = "") -> dict[str, int]:
    """A crawl's outcomes as a run artifact's counts."""
    return {
        f"{prefix}{key}": value
        for key, value in (
            ("pages", report.pages),
            ("requests", report.requests),
            ("downloaded", len(report.downloaded)),
            ("unchanged", len(report.unchanged)),
            ("gone", len(report.gone)),
            ("rejected", len(report.rejected)),
            ("unverified", len(report.unverified)),
        )
    }


def fetch_markdown(reports: list[CrawlReport]) -> str:
    rows = [
        "| root | pages | downloaded | unchanged | resumed | gone | rejected | unverified |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in reports:
        rows.append(
            f"| {r.root} | {r.pages} | {len(r.downloaded)} | {len(r.unchanged)} | {r.resumed} "
            f"| {len(r.gone)} | {len(r.rejected)} | {len(r.unverified)} |"
        )
    return "\n".join(rows)


def _logger() -> Any:
    try:
        return get_run_logger().info
    except Exception:  # outside a flow run (tests, the evaluation): progress to stderr
        import sys

        return lambda message: print(message, file=sys.stderr)
