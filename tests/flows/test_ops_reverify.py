"""Freshness re-verification against a real Prefect API, a real SQLite index and MiniLM.

One corpus of four markdown files is refreshed, three of its documents are made stale, then
one of those files changes, one vanishes and one stays the same before `reverify` runs."""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from core.settings import Settings
from core.store.contract import DocState
from core.store.open import open_store
from core.store.sqlite.chunk_text import ChunkText
from flows.refresh import refresh_flow
from flows.reverify import reverify_flow
from tests.support.ops import (
    copy_fixture,
    corpus_block,
    prefect_api,
    rag_env,
    read_run_artifacts,
    shared_server,
    write_corpora,
)

pytestmark = pytest.mark.slow

ALPHA, BETA, GAMMA, DELTA = "ops:alpha.md", "ops:beta.md", "ops:gamma.md", "ops:delta.md"
LONG_AGO = "2000-01-01"


@dataclass
class Scenario:
    before: dict[str, DocState]
    after: dict[str, DocState]
    result: dict[str, Any]
    artifacts: list[dict[str, Any]]
    index_file: Path


def states(index_dir: Path) -> dict[str, DocState]:
    index = open_store(index_dir, Settings()).open_index("ops")
    try:
        return index.document_states()
    finally:
        index.close()


@pytest.fixture(scope="module")
def scenario(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Scenario:
    server = shared_server(request.config)
    work = tmp_path_factory.mktemp("reverify")
    corpus = copy_fixture("docs", work / "corpus")
    corpora = write_corpora(
        work / "corpora.toml", corpus_block("ops-docs", corpus, "ops", source="ops")
    )
    with pytest.MonkeyPatch.context() as env, prefect_api(server):
        for name, value in {**rag_env(work), "RAG_CORPORA_FILE": str(corpora)}.items():
            env.setenv(name, value)
        refresh_flow(corpus="ops-docs")
        index = open_store(work / "indexes", Settings()).open_index("ops", write=True)
        index.mark_verified([ALPHA, BETA, GAMMA], LONG_AGO)
        index.close()
        before = states(work / "indexes")
        (corpus / "beta.md").write_text("# Beta\n\nBeta now explains reverify outcomes.\n")
        (corpus / "gamma.md").unlink()
        state = reverify_flow(corpus="ops-docs", return_state=True)
        result = state.result()["ops-docs"]
        after = states(work / "indexes")
    artifacts = read_run_artifacts(server, state.state_details.flow_run_id)
    return Scenario(before, after, result, artifacts, work / "indexes" / "ops.sqlite")


def chunk_texts(index_file: Path, doc_id: str) -> list[str]:
    with sqlite3.connect(index_file) as conn:
        rows = conn.execute("SELECT content FROM chunks WHERE doc_id = ?", (doc_id,)).fetchall()
        return [str(ChunkText(str(index_file)).decode(conn, row[0])) for row in rows]


def test_unchanged_stale_document_is_marked_verified_today(scenario: Scenario) -> None:
    assert scenario.before[ALPHA].last_verified == LONG_AGO
    assert scenario.after[ALPHA].last_verified == date.today().isoformat()
    assert scenario.after[ALPHA].content_hash == scenario.before[ALPHA].content_hash
    assert scenario.result["verdicts"]["unchanged"] == [ALPHA]


def test_changed_document_is_reingested_with_its_new_content(scenario: Scenario) -> None:
    assert scenario.after[BETA].content_hash != scenario.before[BETA].content_hash
    assert scenario.after[BETA].last_verified == date.today().isoformat()
    assert any("reverify outcomes" in text for text in chunk_texts(scenario.index_file, BETA))
    assert scenario.result["verdicts"]["changed"] == [BETA]


def test_vanished_document_is_removed_with_its_chunks(scenario: Scenario) -> None:
    assert GAMMA in scenario.before
    assert GAMMA not in scenario.after
    assert chunk_texts(scenario.index_file, GAMMA) == []
    assert scenario.result["verdicts"]["gone"] == [GAMMA]


def test_document_inside_its_freshness_window_is_not_checked(scenario: Scenario) -> None:
    assert scenario.after[DELTA] == scenario.before[DELTA]
    assert scenario.result["counts"]["stale_checked"] == 3
    assert scenario.result["counts"]["fresh_skipped"] == 1


def test_artifact_reports_a_count_for_each_outcome(scenario: Scenario) -> None:
    (artifact,) = [a for a in scenario.artifacts if a["key"] == "reverify-ops-docs"]
    for row in (
        "| unchanged_reverified | 1 |",
        "| changed_reingested | 1 |",
        "| gone_removed | 1 |",
        "| unreadable_kept | 0 |",
    ):
        assert row in artifact["data"]
    assert "| slot acquired (UTC) |" in artifact["data"]


def test_change_that_kept_the_file_mtime_is_still_reingested(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = shared_server(request.config)
    corpus = copy_fixture("docs", tmp_path / "corpus")
    corpora = write_corpora(
        tmp_path / "c.toml", corpus_block("same-mtime", corpus, "ops", source="ops")
    )
    for name, value in {**rag_env(tmp_path), "RAG_CORPORA_FILE": str(corpora)}.items():
        monkeypatch.setenv(name, value)
    beta = corpus / "beta.md"
    with prefect_api(server):
        refresh_flow(corpus="same-mtime")
        index = open_store(tmp_path / "indexes", Settings()).open_index("ops", write=True)
        index.mark_verified([BETA], LONG_AGO)
        index.close()
        stamp = beta.stat()
        beta.write_text("# Beta\n\nRewritten in place by a tool that restores mtimes.\n")
        os.utime(beta, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
        result = reverify_flow(corpus="same-mtime")["same-mtime"]
    assert result["verdicts"]["changed"] == [BETA]
    assert any(
        "restores mtimes" in t for t in chunk_texts(tmp_path / "indexes" / "ops.sqlite", BETA)
    )
