"""A corpus of kind docc kept fresh from the web: the refresh flow fetches and ingests its
root, and the reverify flow asks each stale page once, conditionally, and counts what the
replay server did: one page unchanged, one changed, one gone, one unanswered."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from prefect.testing.utilities import prefect_test_harness

from core.settings import Settings
from core.store.open import open_store
from flows.corpora import load_corpora
from flows.refresh import refresh_flow
from flows.reverify import reverify_flow
from tests.support.paths import FIXTURES
from tests.support.replay_server import Fault, archive_pages, replay

DEMO = FIXTURES / "published" / "Demo.doccarchive"
PREFIX = "/demo-docs"
PAGE = PREFIX + "/data/documentation/demo"
LONG_AGO = "2000-01-01"


def corpora(path: Path, root: str) -> Path:
    path.write_text(
        "[corpora.demo]\n"
        'kind = "docc"\n'
        f"roots = [{json.dumps(root)}]\n"
        'index = "docs"\n'
        'refresh_schedule = "0 2 * * *"\n'
        "rate = 50.0\n"
        "freshness_days = 7\n"
    )
    return path


@pytest.fixture(scope="module")
def scenario(tmp_path_factory):
    work = tmp_path_factory.mktemp("docc")
    with replay(archive_pages(DEMO, PREFIX)) as server, pytest.MonkeyPatch.context() as env:
        root = f"{server.url}{PREFIX}/documentation/demo"
        settings = {
            "RAG_DATA_DIR": str(work), "RAG_INDEX_DIR": str(work / "indexes"),
            "RAG_STAGING_DIR": str(work / "staging"), "RAG_SOURCES_DIR": str(work / "sources"),
            "RAG_CORPORA_FILE": str(corpora(work / "corpora.toml", root)),
        }  # fmt: skip
        for name, value in settings.items():
            env.setenv(name, value)
        with prefect_test_harness(server_startup_timeout=120):
            refreshed = refresh_flow(corpus="demo")
            index = open_store(work / "indexes", Settings()).open_index("docs", write=True)
            index.mark_verified(list(index.document_states()), LONG_AGO)
            index.close()
            page = json.loads(server.pages[f"{PAGE}/widget.json"])
            page["abstract"] = [{"type": "text", "text": "A thing that turns and hums."}]
            server.put(f"{PAGE}/widget.json", json.dumps(page).encode())
            server.remove(f"{PAGE}/widget/spin(times:).json")
            server.faults[f"{PAGE}/gettingstarted.json"] = [Fault("503", times=99, retry_after="")]
            asked_before = len(server.hits)
            verified = reverify_flow(corpus="demo")["demo"]
            asked = [h for h in server.hits[asked_before:] if h.path != "/robots.txt"]
    with sqlite3.connect(work / "indexes" / "docs.sqlite") as conn:
        left = [r[0] for r in conn.execute("SELECT doc_id FROM chunks WHERE chunk_index = 0")]
    return refreshed, verified, asked, left


def test_refreshing_a_docc_corpus_fetches_and_ingests_its_root(scenario):
    refreshed, *_ = scenario
    assert refreshed["demo"]["counts"]["docs_new"] == 4


def test_reverify_counts_what_the_web_answered(scenario):
    _, verified, _, _ = scenario
    counts = verified["counts"]
    assert (counts["stale_checked"], counts["unchanged_reverified"]) == (4, 1)
    assert (counts["changed_reingested"], counts["gone_removed"]) == (1, 1)
    assert counts["unverified_kept"] == 1


def test_reverify_asks_each_stale_page_conditionally(scenario):
    _, _, asked, _ = scenario
    firsts = {h.path: h for h in reversed(asked)}
    assert len(firsts) == 4
    assert all("If-None-Match" in h.headers for h in firsts.values())


def test_a_page_gone_upstream_leaves_the_index_and_an_unanswered_one_stays(scenario):
    *_, left = scenario
    assert not any("spin" in doc for doc in left)
    assert any("gettingstarted" in doc for doc in left)


def test_a_docc_corpus_names_roots_not_paths(tmp_path):
    path = tmp_path / "corpora.toml"
    path.write_text(
        '[corpora.x]\nkind = "docc"\nroots = ["https://example.org/blog"]\n'
        'refresh_schedule = "0 2 * * *"\n'
    )
    with pytest.raises(Exception, match="not a DocC documentation root"):
        load_corpora(path)
