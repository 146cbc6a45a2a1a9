"""Crawling a DocC documentation root from a replay server: which pages are fetched, what a
second run asks, how bad answers become named rejects, and what politeness measures."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from chunkers.sources.web.crawl import CrawlReport, crawl
from chunkers.sources.web.polite import Politeness
from chunkers.sources.web.records import GONE, NOT_MODIFIED, OK, REJECTED, load_record
from chunkers.sources.web.site import DocSite, doc_site
from tests.support.paths import FIXTURES, SHARED_DATA
from tests.support.replay_server import (
    Fault,
    ReplayServer,
    ToReplay,
    archive_pages,
    reachable,
    replay,
)

DEMO = FIXTURES / "published" / "Demo.doccarchive"
PREFIX = "/demo-docs"
WIDGET = f"{PREFIX}/data/documentation/demo/widget.json"
SPIN = f"{PREFIX}/data/documentation/demo/widget/spin(times:).json"
FAST = Politeness(concurrency=4, rate=200.0, backoff_s=0.05, max_backoff_s=0.2)
PARSER = SHARED_DATA / "apple-docs/render-json/doccarchive-apple-swift-argument-parser"
MAPKIT = SHARED_DATA / "apple-docs/render-json/apple-pages/joshspicer-apple-developer-docs-mcp"


def site_of(server: ReplayServer) -> DocSite:
    return doc_site(f"{server.url}{PREFIX}/documentation/demo")


def run(site: DocSite, sources: Path, politeness: Politeness = FAST, **kw) -> CrawlReport:
    return asyncio.run(crawl(site, sources, politeness, "rag-retrieve-test/1", **kw))


@pytest.fixture
def server():
    with replay(archive_pages(DEMO, PREFIX)) as served:
        yield served


def test_a_root_url_names_its_render_json_on_apples_site():
    site = doc_site("https://developer.apple.com/documentation/SwiftData")
    assert site.data_url(site.root) == (
        "https://developer.apple.com/tutorials/data/documentation/swiftdata.json"
    )


def test_a_docc_sites_root_names_its_data_folder():
    site = doc_site("https://example.org/pkg/documentation/ArgumentParser")
    assert (
        site.data_url(site.root) == "https://example.org/pkg/data/documentation/argumentparser.json"
    )
    assert site.page_url("/documentation/argumentparser/flag") == (
        "https://example.org/pkg/documentation/argumentparser/flag"
    )


def test_every_page_reachable_under_the_root_is_fetched(server, tmp_path):
    report = run(site_of(server), tmp_path)
    assert sorted(report.downloaded) == [
        "/documentation/demo", "/documentation/demo/gettingstarted",
        "/documentation/demo/widget", "/documentation/demo/widget/spin(times:)",
    ]  # fmt: skip
    assert (tmp_path / server.url.split("//")[1].replace(":", "_") / WIDGET[1:]).is_file()


def test_each_page_has_a_record_of_its_fetch(server, tmp_path):
    site = site_of(server)
    run(site, tmp_path)
    record = load_record(site.record_file(tmp_path, "/documentation/demo/widget"))
    assert record is not None and record.status == OK and record.etag
    assert record.page_url == f"{server.url}{PREFIX}/documentation/demo/widget"


def test_a_second_run_asks_conditionally_and_downloads_no_body(server, tmp_path):
    run(site_of(server), tmp_path)
    before = len(server.bodies_sent())
    report = run(site_of(server), tmp_path)
    assert len(server.bodies_sent()) == before
    assert len(report.unchanged) == 4 and not report.downloaded
    asked = [h for h in server.page_hits()][-4:]
    assert all("If-None-Match" in h.headers for h in asked)


def test_an_unchanged_page_keeps_its_file_untouched(server, tmp_path):
    site = site_of(server)
    run(site, tmp_path)
    page = site.page_file(tmp_path, "/documentation/demo/widget")
    mtime = page.stat().st_mtime_ns
    run(site, tmp_path)
    assert page.stat().st_mtime_ns == mtime


def test_a_changed_page_is_downloaded_alone(server, tmp_path):
    site = site_of(server)
    run(site, tmp_path)
    page = json.loads(server.pages[WIDGET])
    page["abstract"] = [{"type": "text", "text": "A thing that turns, now faster."}]
    server.put(WIDGET, json.dumps(page).encode())
    report = run(site, tmp_path)
    assert report.downloaded == ["/documentation/demo/widget"]


def test_a_page_gone_from_the_server_is_removed(server, tmp_path):
    site = site_of(server)
    run(site, tmp_path)
    server.remove(SPIN)
    report = run(site, tmp_path)
    assert report.gone == ["/documentation/demo/widget/spin(times:)"]
    assert not site.page_file(tmp_path, "/documentation/demo/widget/spin(times:)").exists()
    record = load_record(site.record_file(tmp_path, "/documentation/demo/widget/spin(times:)"))
    assert record is not None and record.status == GONE


def test_an_interrupted_crawl_resumes_without_asking_again(server, tmp_path):
    site = site_of(server)
    run(site, tmp_path)
    state = site.crawl_file(tmp_path)
    state.write_text(state.read_text().replace('"complete": true', '"complete": false'))
    asked = len(server.page_hits())
    report = run(site, tmp_path)
    assert report.resumed == 4 and len(server.page_hits()) == asked


@pytest.mark.parametrize(
    ("fault", "reason"),
    [
        (Fault("html", times=9), "an HTML page, not a render JSON page"),
        (Fault("truncate", times=9), "the body broke off"),
        (Fault("loop", times=9), "redirect loop"),
        (Fault("offsite", times=9, location="https://elsewhere.example/x.json"), "another host"),
    ],
)
def test_a_bad_answer_is_a_named_reject_and_the_crawl_goes_on(server, tmp_path, fault, reason):
    server.faults[SPIN] = [fault]
    site = site_of(server)
    report = run(site, tmp_path)
    ((url, why),) = report.rejected
    assert url.endswith("spin(times:).json") and reason in why
    assert len(report.downloaded) == 3
    assert not site.page_file(tmp_path, "/documentation/demo/widget/spin(times:)").exists()
    record = load_record(site.record_file(tmp_path, "/documentation/demo/widget/spin(times:)"))
    assert record is not None and record.status == REJECTED


def test_a_rejected_page_is_asked_again_by_the_next_run(server, tmp_path):
    server.faults[SPIN] = [Fault("html")]
    site = site_of(server)
    run(site, tmp_path)
    report = run(site, tmp_path)
    assert "/documentation/demo/widget/spin(times:)" in report.downloaded


def test_json_that_is_no_docc_page_is_a_named_reject(server, tmp_path):
    server.put(SPIN, b'{"hello": "world"}')
    report = run(site_of(server), tmp_path)
    assert "JSON that is not a DocC page" in report.rejected[0][1]


def test_a_429_is_waited_out_for_as_long_as_retry_after_asks(server, tmp_path):
    server.faults[WIDGET] = [Fault("429", retry_after="1")]
    report = run(site_of(server), tmp_path)
    hits = [h for h in server.page_hits() if h.path == WIDGET]
    assert [h.status for h in hits] == [429, 200]
    assert hits[1].start - hits[0].start >= 0.95
    assert "/documentation/demo/widget" in report.downloaded


def test_a_503_is_retried_with_backoff(server, tmp_path):
    server.faults[WIDGET] = [Fault("503", retry_after="", times=2)]
    report = run(site_of(server), tmp_path)
    assert [h.status for h in server.page_hits() if h.path == WIDGET] == [503, 503, 200]
    assert "/documentation/demo/widget" in report.downloaded


def test_a_slow_body_past_the_read_timeout_is_retried(server, tmp_path):
    server.faults[WIDGET] = [Fault("slow", delay_s=1.0)]
    report = run(site_of(server), tmp_path, Politeness(read_timeout_s=0.3, rate=200.0,
                                                       backoff_s=0.05))  # fmt: skip
    assert "/documentation/demo/widget" in report.downloaded
    assert len([h for h in server.page_hits() if h.path == WIDGET]) == 2


def test_a_host_that_keeps_failing_stops_the_crawl_with_the_reason(server, tmp_path):
    for path in list(server.pages):
        if path != f"{PREFIX}/data/documentation/demo.json":
            server.faults[path] = [Fault("503", retry_after="", times=99)]
    politeness = Politeness(rate=200.0, backoff_s=0.01, max_backoff_s=0.02, attempts=2,
                            host_failures=2)  # fmt: skip
    report = run(site_of(server), tmp_path, politeness)
    assert report.stopped and "failed 2 pages in a row" in report.stopped
    assert report.downloaded == ["/documentation/demo"]


def test_robots_txt_is_obeyed(server, tmp_path):
    server.robots = f"User-agent: *\nDisallow: {PREFIX}/data/documentation/demo/widget/\n"
    report = run(site_of(server), tmp_path)
    assert report.robots_disallowed == [server.url + SPIN]
    assert all(h.path != SPIN for h in server.hits)


def test_requests_in_flight_never_exceed_the_concurrency(tmp_path):
    if not PARSER.is_dir():
        pytest.skip("no shared apple-docs data")
    with replay(archive_pages(PARSER, "/sap")) as served:
        for path in served.pages:
            served.faults[path] = [Fault("slow", delay_s=0.05)]
        site = doc_site(f"{served.url}/sap/documentation/argumentparser")
        run(site, tmp_path, Politeness(concurrency=3, rate=200.0), max_pages=40)
        assert served.max_in_flight == 3


def test_request_starts_never_exceed_the_rate(server, tmp_path):
    run(site_of(server), tmp_path, Politeness(concurrency=4, rate=5.0))
    # Spaced 0.2 s apart when they leave; on arrival a connection's setup may shift one
    # start, never into a burst, and never above the rate over the run.
    starts = sorted(h.start for h in server.page_hits())
    gaps = [b - a for a, b in zip(starts, starts[1:], strict=False)]
    assert min(gaps) >= 0.1
    assert (len(starts) - 1) / (starts[-1] - starts[0]) <= 5.0


def test_max_pages_bounds_the_crawl(server, tmp_path):
    report = run(site_of(server), tmp_path, max_pages=2)
    assert report.pages == 2 and report.truncated


def test_the_swift_argument_parser_archive_is_fetched_whole(tmp_path):
    if not PARSER.is_dir():
        pytest.skip("no shared apple-docs data")
    with replay(archive_pages(PARSER, "/sap")) as served:
        report = run(doc_site(f"{served.url}/sap/documentation/argumentparser"), tmp_path)
    assert len(report.downloaded) == reachable(PARSER) and not report.rejected


def test_apples_layout_is_fetched_from_apples_host_alone(tmp_path):
    if not MAPKIT.is_dir():
        pytest.skip("no shared apple-docs data")
    pages = {
        "/" + p.relative_to(MAPKIT / "get_apple_doc_content").as_posix(): p.read_bytes()
        for p in (MAPKIT / "get_apple_doc_content").rglob("*.json")
    }
    with replay(pages) as served:
        transport = ToReplay(served)
        site = doc_site("https://developer.apple.com/documentation/mapkit/mkpolygon")
        report = run(site, tmp_path, transport=transport)
    assert report.downloaded[:1] == ["/documentation/mapkit/mkpolygon"]
    assert "/documentation/mapkit/mkpolygon/interiorpolygons" in report.downloaded
    assert set(transport.hosts) == {"developer.apple.com"}
    assert not report.rejected


def test_no_status_but_200_304_404_410_writes_anything(server, tmp_path):
    server.faults[WIDGET] = [Fault("503", retry_after="", times=99)]
    site = site_of(server)
    run(site, tmp_path, Politeness(rate=200.0, backoff_s=0.01, attempts=2))
    assert not site.page_file(tmp_path, "/documentation/demo/widget").exists()
    record = load_record(site.record_file(tmp_path, "/documentation/demo/widget"))
    assert record is not None and record.status == "unverified"


def test_a_304_after_a_verified_page_keeps_its_validators(server, tmp_path):
    site = site_of(server)
    run(site, tmp_path)
    first = load_record(site.record_file(tmp_path, "/documentation/demo"))
    time.sleep(1.1)
    run(site, tmp_path)
    second = load_record(site.record_file(tmp_path, "/documentation/demo"))
    assert first and second and second.status == NOT_MODIFIED
    assert (second.etag, second.fetched_at) == (first.etag, first.fetched_at)
    assert second.verified_at != first.verified_at


def test_a_half_written_file_a_killed_crawl_left_is_cleared_on_resume(server, tmp_path):
    site = site_of(server)
    run(site, tmp_path)
    state = site.crawl_file(tmp_path)
    state.write_text(state.read_text().replace('"complete": true', '"complete": false'))
    leftover = site.page_file(tmp_path, "/documentation/demo").parent / ".abc.part"
    leftover.write_text("{half")
    run(site, tmp_path)
    assert not leftover.exists()


def test_a_page_that_cannot_be_written_is_counted_and_the_crawl_ends(server, tmp_path):
    site = site_of(server)
    blocked = site.page_file(tmp_path, "/documentation/demo/widget")
    blocked.parent.mkdir(parents=True)
    blocked.mkdir()  # a folder where the page's file goes: its write fails
    report = run(site, tmp_path)
    assert [url for url, _ in report.unverified] == [server.url + WIDGET]
    assert len(report.downloaded) == 3  # the others, the method by the article's reference
