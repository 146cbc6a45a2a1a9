"""A chunk that embeds to an all-zero (or non-finite) vector, which no store can rank by cosine:
its document is a named reject of the ingest, it stays found by keyword search (the lexical
phase loaded it) and pending for vectors, and every other chunk gets its vector, on the
embedded store and on the TiDB store (MariaDB standing in)."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

from core.embedding.base import BatchResult
from core.settings import Settings
from core.store.filters import SearchFilter
from core.store.sqlite.store import SQLiteStore
from core.store.tidb.store import TiDBStore
from loaders.ingest import ingest
from loaders.summary import IngestSummary
from loaders.target import IngestTarget
from tests.support.fake_runtime import FakeEmbedder
from tests.support.ingest import copy_corpus, settings_for

MARKER = "causeway"  # in one section of tides.md only


class ZeroForMarker(FakeEmbedder):
    """The fake embedder, but every text containing MARKER embeds to zeros."""

    def _embed_batch(self, texts: list[str]) -> BatchResult:
        result = super()._embed_batch(texts)
        vectors = result.vectors.copy()
        vectors[[MARKER in t for t in texts]] = 0.0
        return BatchResult(vectors, result.tokens, result.padded_tokens)


def ingest_into(tmp_path: Path, store: str, name: str = "zero") -> IngestSummary:
    corpus = copy_corpus(tmp_path)
    settings = settings_for(tmp_path)
    return ingest([str(corpus)], settings, IngestTarget(name, store), embedder=ZeroForMarker())


def check(summary: IngestSummary, index) -> None:
    assert summary.docs_rejected == 1
    (reject,) = summary.rejects
    assert Path(reject["file"]).name == "tides.md" and "all-zero" in reject["reason"]
    assert "keyword search only" in reject["reason"]
    names = sorted(Path(d.split(":", 1)[1]).name for d in index.document_states())
    assert names == ["beekeeping.md", "lighthouse.md", "sourdough.md", "tides.md"]
    # Only the marker's chunk waits for a vector; keyword search finds it meanwhile.
    (pending,) = index.pending_vectors("", 100)
    assert MARKER in pending.content
    assert summary.chunks_pending == 1
    hits = index.bm25_search(MARKER, SearchFilter(), 5)
    assert pending.chunk_id in [h.chunk_id for h in hits]


def test_an_ingest_names_the_document_and_leaves_the_chunk_keyword_only(tmp_path):
    summary = ingest_into(tmp_path, str(tmp_path / "store"))
    with SQLiteStore(tmp_path / "store").open_index("zero") as index:
        check(summary, index)


@pytest.mark.mariadb
@pytest.mark.skipif(
    not os.environ.get("RAG_TEST_MYSQL_DSN"),
    reason="RAG_TEST_MYSQL_DSN is not set: run `source .ci/mariadb.sh && start_private_mariadb`",
)
def test_on_the_tidb_store_too(tmp_path):
    name = f"zero_{uuid.uuid4().hex[:8]}"
    dsn = os.environ["RAG_TEST_MYSQL_DSN"]
    store = TiDBStore.from_url(dsn, Settings(staging_dir=tmp_path))
    try:
        summary = ingest_into(tmp_path, dsn, name)
        with store.open_index(name) as index:
            check(summary, index)
    finally:
        if name in store.list_indexes():
            store.drop_index(name)
