"""A fetch killed (SIGKILL) in the middle of its crawl, then run again: the second run
completes the crawl without asking again for any page the first one wrote, and the index it
ingests passes SQLite's integrity check."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from chunkers.sources.web.site import doc_site
from tests.support.paths import ROOT, SHARED_DATA
from tests.support.replay_server import archive_pages, reachable, replay

PARSER = SHARED_DATA / "apple-docs/render-json/doccarchive-apple-swift-argument-parser"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not PARSER.is_dir(), reason="no shared apple-docs data"),
]


def command(root: str, store: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "flows.fetch", root, "--store", str(store), "--index", "sap",
            "--json", *extra]  # fmt: skip


def test_a_killed_crawl_resumes_without_fetching_a_written_page_again(tmp_path):
    env = dict(os.environ)
    for var, sub in (("DATA", "data"), ("INDEX", "indexes"), ("STAGING", "staging"),
                     ("SOURCES", "sources")):  # fmt: skip
        env[f"RAG_{var}_DIR"] = str(tmp_path / sub)
    with replay(archive_pages(PARSER, "/sap")) as server:
        root = f"{server.url}/sap/documentation/argumentparser"
        site = doc_site(root)
        pages = site.site_folder(tmp_path / "sources")
        first = subprocess.Popen(
            command(root, tmp_path / "store", "--no-ingest", "--rate", "25"),
            cwd=ROOT, env=env, start_new_session=True,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and len(list(pages.rglob("*.json"))) < 60:
            time.sleep(0.05)
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
        written = {p.relative_to(pages).as_posix() for p in pages.rglob("*.json")}
        asked_before = len(server.hits)
        done = subprocess.run(
            command(root, tmp_path / "store", "--rate", "50", "--vectors", "later"),
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        asked_after = {h.path.removeprefix("/sap/") for h in server.hits[asked_before:]}
    assert 60 <= len(written) < reachable(PARSER)
    assert done.returncode == 0, done.stderr[-3000:]
    assert not written & asked_after
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["fetch"][0]["resumed"] >= len(written)
    assert result["fetch"][0]["pages"] == reachable(PARSER)
    assert result["ingest"][0]["docs_new"] == reachable(PARSER)
    with sqlite3.connect(tmp_path / "store" / "sap.sqlite") as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
