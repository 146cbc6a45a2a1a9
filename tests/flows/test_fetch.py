"""`rag-retrieve fetch` through the real Prefect flow, against a replay server: a DocC site
fetched and ingested, then kept up to date by running fetch again (only conditional requests;
a changed page re-ingested alone; a page gone removed from the index)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from prefect.testing.utilities import prefect_test_harness

from flows.fetch import main
from tests.support.paths import FIXTURES
from tests.support.replay_server import ReplayServer, archive_pages, replay

DEMO = FIXTURES / "published" / "Demo.doccarchive"
PREFIX = "/demo-docs"
WIDGET = f"{PREFIX}/data/documentation/demo/widget.json"
SPIN = f"{PREFIX}/data/documentation/demo/widget/spin(times:).json"


@pytest.fixture(scope="module")
def prefect_api():
    with prefect_test_harness(server_startup_timeout=120):
        yield


def fetch(server: ReplayServer, store: Path, *, ingest: bool = True) -> dict:
    """The flow `rag-retrieve fetch ROOT --index docs --rate 50 --vectors later` runs."""
    from flows.fetch_flow import fetch_flow

    root = f"{server.url}{PREFIX}/documentation/demo"
    result = fetch_flow(
        urls=[root], index="docs", store=str(store), rate=50.0, ingest=ingest,
        defer_vectors=True,
    )  # fmt: skip
    return json.loads(json.dumps(result, default=str))


@pytest.fixture
def env(tmp_path, monkeypatch):
    for var, sub in (("DATA", "data"), ("INDEX", "indexes"), ("STAGING", "staging"),
                     ("SOURCES", "sources")):  # fmt: skip
        monkeypatch.setenv(f"RAG_{var}_DIR", str(tmp_path / sub))
    return tmp_path


def documents(store: Path) -> dict[str, str]:
    with sqlite3.connect(store / "docs.sqlite") as conn:
        rows = conn.execute("SELECT doc_id, url FROM chunks WHERE chunk_index = 0").fetchall()
    return dict(rows)


def test_a_fetched_site_is_ingested_with_the_urls_a_person_opens(prefect_api, env):
    with replay(archive_pages(DEMO, PREFIX)) as server:
        result = fetch(server, env / "store")
        urls = set(documents(env / "store").values())
    assert result["ingest"][0]["docs_new"] == 4
    assert f"{server.url}{PREFIX}/documentation/demo/widget" in urls


def test_fetching_again_asks_conditionally_and_ingests_nothing(prefect_api, env):
    with replay(archive_pages(DEMO, PREFIX)) as server:
        fetch(server, env / "store")
        bodies = len(server.bodies_sent())
        again = fetch(server, env / "store")
        assert len(server.bodies_sent()) == bodies
    assert again["fetch"][0]["unchanged"] == 4
    assert again["ingest"][0]["docs_changed"] == again["ingest"][0]["docs_new"] == 0


def test_a_page_changed_upstream_is_re_ingested_alone(prefect_api, env):
    with replay(archive_pages(DEMO, PREFIX)) as server:
        fetch(server, env / "store")
        page = json.loads(server.pages[WIDGET])
        page["abstract"] = [{"type": "text", "text": "A thing that turns, and now hums."}]
        server.put(WIDGET, json.dumps(page).encode())
        again = fetch(server, env / "store")
    assert again["fetch"][0]["downloaded"] == 1
    assert (again["ingest"][0]["docs_changed"], again["ingest"][0]["docs_new"]) == (1, 0)


def test_a_page_gone_upstream_leaves_the_index(prefect_api, env):
    with replay(archive_pages(DEMO, PREFIX)) as server:
        fetch(server, env / "store")
        server.remove(SPIN)
        again = fetch(server, env / "store")
    assert again["ingest"][0]["docs_deleted"] == 1
    assert not any("spin" in doc for doc in documents(env / "store"))


def test_no_ingest_only_fetches(prefect_api, env):
    with replay(archive_pages(DEMO, PREFIX)) as server:
        result = fetch(server, env / "store", ingest=False)
    assert result["ingest"] == [] and result["fetch"][0]["downloaded"] == 4
    assert not (env / "store" / "docs.sqlite").exists()


def test_the_command_prints_what_each_request_did_as_json(env):
    import subprocess
    import sys

    with replay(archive_pages(DEMO, PREFIX)) as server:
        done = subprocess.run(
            [sys.executable, "-m", "flows.fetch", f"{server.url}{PREFIX}/documentation/demo",
             "--store", str(env / "store"), "--no-ingest", "--json", "--rate", "50"],
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    (root,) = json.loads(done.stdout.strip().splitlines()[-1])["fetch"]
    assert (root["pages"], root["downloaded"], root["rejected"]) == (4, 4, [])


def test_a_url_that_is_no_documentation_root_exits_2(capsys):
    assert main(["https://example.org/blog/post"]) == 2
    assert "not a DocC documentation root" in capsys.readouterr().err
