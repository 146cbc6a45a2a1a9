"""Calibration tells documents apart by their doc_id, on an index of a JSONL corpus whose
records have no path (Apple documentation, WWDC transcripts): tests/fixtures/calibration,
three documents, each with an Overview, one of them quoting another's heading."""

from __future__ import annotations

from pathlib import Path

import pytest

from chunkers.sources.discovery import discover
from chunkers.sources.reading import Defaults, read_all
from core.settings import Settings
from core.store.modes import LONG_LIVED
from core.store.open import open_store
from loaders.ingest import ingest_documents
from query.calibration import calibrate
from query.calibration.pairs import distinctive_headings, mine
from tests.support.embedders import HashEmbedder
from tests.support.paths import FIXTURES

CORPUS = FIXTURES / "calibration" / "background-docs.jsonl"
SCHEDULING = "Refreshing your app in the background › Scheduling a refresh task"
RECAP = "Advances in app background execution › Recap of scheduling a refresh task"


@pytest.fixture
def index(tmp_path: Path):
    """The fixture ingested as a user's JSONL file is: read, chunked, embedded, loaded."""
    settings = Settings(index_dir=tmp_path / "indexes", data_dir=tmp_path / "data")
    store = open_store(str(tmp_path / "store"), settings, modes=LONG_LIVED)
    opened = store.open_index("docs", create=True)
    documents = read_all(discover([CORPUS]), Defaults()).documents
    ingest_documents(documents, opened, settings, embedder=HashEmbedder())
    yield opened
    opened.close()


def rows_of(index) -> dict[str, dict]:
    rows = index.fetch(index.sample_chunk_ids(100))
    assert rows and all(r["path"] is None for r in rows.values())  # the case at issue
    return {c: {"chunk_id": c, **r} for c, r in rows.items()}


def chunk_under(rows: dict[str, dict], context: str) -> dict:
    return next(r for r in rows.values() if r["context"] == context)


def test_a_heading_every_document_has_is_not_asked_though_no_chunk_has_a_path(index):
    assert distinctive_headings(rows_of(index).values()) == {
        "scheduling a refresh task",
        "recap of scheduling a refresh task",
        "requiring external power",
    }


def test_another_documents_chunk_quoting_the_question_stays_among_the_hits(index):
    rows = rows_of(index)
    pair = mine(chunk_under(rows, SCHEDULING), distinctive_headings(rows.values()))
    assert pair is not None and pair.query == "Scheduling a refresh task"
    assert not calibrate.reveals(pair, chunk_under(rows, RECAP))


def test_a_hit_from_another_document_does_not_count_as_finding_the_pairs(index, monkeypatch):
    # Three documents give three pairs; the evidence threshold is for real indexes.
    monkeypatch.setattr(calibrate, "MIN_PAIRS", 1)
    found = calibrate.Calibrator(index, HashEmbedder(), depth=100, rrf_k=60, log=print).run(6)
    assert found.pairs == 3
    # The WWDC recap quotes "Scheduling a refresh task" five times and ranks above the
    # stripped section in both signals: that pair's document is found second at best.
    for rule in ("adaptive", "rrf"):
        assert found.mrr[rule] <= (1 + 1 + 0.5) / 3
