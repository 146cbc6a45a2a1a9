"""A chunk that embeds to an all-zero (or non-finite) vector: its document is a named reject of
the ingest and the other documents are loaded (issue 30, item 6.3), on the embedded store and
on the TiDB store (MariaDB standing in), which refuses a batch holding such a vector."""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path

import numpy as np
import pytest

from core.embedding.base import BatchResult
from core.settings import Settings
from core.store.sqlite.store import SQLiteStore
from core.store.tidb.store import TiDBStore
from loaders.arrow_tables import chunks_to_table, documents_to_table, references_to_table
from loaders.ingest import ingest
from loaders.summary import IngestSummary
from loaders.target import IngestTarget
from loaders.vector_screen import screen_vectors
from tests.support.fake_runtime import FakeEmbedder
from tests.support.paths import FIXTURES
from tests.support.store_contract import make_chunk

MARKER = "causeway"  # in one section of tides.md only


class ZeroForMarker(FakeEmbedder):
    """The fake embedder, but every text containing MARKER embeds to zeros."""

    def _embed_batch(self, texts: list[str]) -> BatchResult:
        result = super()._embed_batch(texts)
        vectors = result.vectors.copy()
        vectors[[MARKER in t for t in texts]] = 0.0
        return BatchResult(vectors, result.tokens, result.padded_tokens)


def test_documents_with_an_unusable_vector_are_left_out_whole_and_named():
    chunks = [
        make_chunk("a-0", "doc-a"),
        make_chunk("b-0", "doc-b"),
        make_chunk("b-1", "doc-b"),
        make_chunk("c-0", "doc-c"),
    ]
    vectors = np.eye(4, dtype=np.float32)
    vectors[2] = 0.0  # b-1
    vectors[3, 0] = np.nan  # c-0
    docs = documents_to_table(
        [{"doc_id": d, "content_hash": "h"} for d in ("doc-a", "doc-b", "doc-c")]
    )
    screened = screen_vectors(
        docs, chunks_to_table(chunks), references_to_table(chunks), vectors, origins={}
    )
    assert screened.documents.column("doc_id").to_pylist() == ["doc-a"]
    assert screened.chunks.column("chunk_id").to_pylist() == ["a-0"]
    assert np.array_equal(screened.vectors, vectors[:1])
    assert set(screened.rejected) == {"doc-b", "doc-c"}
    assert "b-1" in screened.rejected["doc-b"].reason
    assert "b-0" not in screened.rejected["doc-b"].reason


def ingest_into(tmp_path: Path, store: str, name: str = "zero") -> IngestSummary:
    corpus = Path(shutil.copytree(FIXTURES / "ingest" / "corpus", tmp_path / "corpus"))
    settings = Settings(
        data_dir=tmp_path / "data",
        index_dir=tmp_path / "indexes",
        staging_dir=tmp_path / "staging",
        chunk_target_tokens=40,
        chunk_max_tokens=60,
        chunk_overlap_tokens=0,
    )
    return ingest([str(corpus)], settings, IngestTarget(name, store), embedder=ZeroForMarker())


def check(summary: IngestSummary, doc_ids: list[str]) -> None:
    assert summary.docs_rejected == 1
    (reject,) = summary.rejects
    assert Path(reject["file"]).name == "tides.md" and "all-zero" in reject["reason"]
    names = sorted(Path(d.split(":", 1)[1]).name for d in doc_ids)
    assert names == ["beekeeping.md", "lighthouse.md", "sourdough.md"]


def test_an_ingest_rejects_the_document_and_loads_the_others(tmp_path):
    summary = ingest_into(tmp_path, str(tmp_path / "store"))
    with SQLiteStore(tmp_path / "store").open_index("zero") as index:
        check(summary, list(index.document_states()))


@pytest.mark.mariadb
@pytest.mark.skipif(
    not os.environ.get("RAG_TEST_MYSQL_DSN"),
    reason="RAG_TEST_MYSQL_DSN is not set: run `source .ci/mariadb.sh && start_private_mariadb`",
)
def test_on_the_tidb_store_the_good_documents_are_loaded_too(tmp_path):
    name = f"zero_{uuid.uuid4().hex[:8]}"
    dsn = os.environ["RAG_TEST_MYSQL_DSN"]
    store = TiDBStore.from_url(dsn, Settings(staging_dir=tmp_path))
    try:
        summary = ingest_into(tmp_path, dsn, name)
        with store.open_index(name) as index:
            check(summary, list(index.document_states()))
    finally:
        if name in store.list_indexes():
            store.drop_index(name)
