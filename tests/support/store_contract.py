"""The contract every index store honours, as reusable tests.

A backend's test module defines a `store` fixture (an empty `core.store.contract.Store`) and pulls
these in with `from tests.support.store_contract import *` (helpers, fixtures, model binding,
the store level and the write path) and `from tests.support.store_contract_reads import *`
(searches, filters, fetch, link names, verification, stats). Nothing here knows the backend: tests
go through the `Store` / `IndexStore` protocols only, and each opens its own uniquely named
index and drops it afterwards, so a shared server is fine.
"""

from __future__ import annotations

import contextlib
import json
import uuid
import zlib
from datetime import date
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from chunkers.model import Chunk
from core.store.contract import LoadBatch, ModelMismatch, StoreError, UnknownIndex
from core.store.filters import SearchFilter
from loaders.arrow_tables import chunks_to_table, documents_to_table, references_to_table
from tests.support.paths import FIXTURES

DIM = 16
MODEL = "contract-model"
FIXTURE = FIXTURES / "store" / "chunks.jsonl"
TODAY = date(2024, 6, 1)
ALL = SearchFilter()

# -- helpers ------------------------------------------------------------------------------


def make_chunk(chunk_id: str, doc_id: str, **fields: Any) -> Chunk:
    base: dict[str, Any] = {
        "chunk_index": 0,
        "content": f"content of {chunk_id}",
        "context": "",
        "chunk_type": "api_doc",
        "language": "markdown",
        "source": "apple_docs",
        "domain": "ios",
        "token_count": 10,
        "content_hash": f"hash-{chunk_id}",
    }
    base.update(fields)
    return Chunk(chunk_id=chunk_id, doc_id=doc_id, **base)


def fixture_chunks() -> list[Chunk]:
    return [
        make_chunk(**json.loads(line)) for line in FIXTURE.read_text().splitlines() if line.strip()
    ]


def vector_for(chunk_id: str, dim: int = DIM) -> np.ndarray:
    """A deterministic unit vector per chunk id."""
    v = np.random.default_rng(zlib.crc32(chunk_id.encode())).normal(size=dim).astype(np.float32)
    return v / np.linalg.norm(v)


def batch_of(
    chunks: list[Chunk],
    *,
    doc_hash: str = "v1",
    extra_docs: tuple[str, ...] = (),
    delete: tuple[str, ...] = (),
    vectors: np.ndarray | None = None,
    without_vectors: bool = False,
) -> LoadBatch:
    """A batch writing every document of `chunks` (plus `extra_docs` with no chunks);
    `without_vectors`: the chunks are loaded with none, as an ingest's lexical phase does."""
    doc_ids = list(dict.fromkeys([c.doc_id for c in chunks] + list(extra_docs)))
    docs = documents_to_table(
        [
            {
                "doc_id": d,
                "source_path": f"/corpus/{d}.md",
                "content_hash": f"{d}-{doc_hash}",
                "mtime": 1700000000.0,
                "last_verified": "2024-05-01",
                "metadata": {"origin": d},
            }
            for d in doc_ids
        ]
    )
    if vectors is None:
        vectors = np.stack([vector_for(c.chunk_id) for c in chunks]) if chunks else None
    if vectors is None:
        vectors = np.zeros((0, DIM), dtype=np.float32)
    return LoadBatch(
        documents=docs,
        chunks=chunks_to_table(chunks),
        vectors=None if without_vectors else vectors,
        delete_doc_ids=list(delete),
        references=references_to_table(chunks),
    )


def ids(hits: list) -> list[str]:
    return [h.chunk_id for h in hits]


@pytest.fixture
def index(store):
    """A fresh, model-bound index in the backend's `store`, dropped afterwards."""
    name = f"contract_{uuid.uuid4().hex[:10]}"
    opened = store.open_index(name, create=True)
    opened.bind_model(MODEL, DIM)
    yield opened
    opened.close()
    with contextlib.suppress(StoreError):
        store.drop_index(name)


@pytest.fixture
def loaded(index):
    """The index with the fixture chunks loaded."""
    index.apply(batch_of(fixture_chunks()))
    return index


# -- model binding ------------------------------------------------------------------------


def test_bind_model_records_model_and_dim(index):
    assert (index.model_id, index.dim) == (MODEL, DIM)


def test_bind_model_again_with_same_model_is_accepted(index):
    index.bind_model(MODEL, DIM)
    assert index.model_id == MODEL


def test_bind_model_mismatch_names_index_and_both_models(index):
    with pytest.raises(ModelMismatch) as err:
        index.bind_model("other-model", DIM)
    message = str(err.value)
    assert index.name in message and MODEL in message and "other-model" in message


def test_bind_model_with_other_dim_raises(index):
    with pytest.raises(ModelMismatch):
        index.bind_model(MODEL, DIM * 2)


# -- store level --------------------------------------------------------------------------


def test_open_missing_index_without_create_names_available_ones(store, index):
    with pytest.raises(UnknownIndex) as err:
        store.open_index(f"missing_{uuid.uuid4().hex[:8]}")
    assert index.name in str(err.value)


def test_created_index_is_listed_and_gone_after_drop(store):
    name = f"contract_{uuid.uuid4().hex[:10]}"
    store.open_index(name, create=True).close()
    assert name in store.list_indexes()
    store.drop_index(name)
    assert name not in store.list_indexes()


def test_reopened_index_keeps_its_data(store, loaded):
    again = store.open_index(loaded.name)
    try:
        assert set(again.fetch(["nav-1"])) == {"nav-1"}
        assert again.model_id == MODEL
    finally:
        again.close()


# -- apply ----------------------------------------------------------------------------------


def test_apply_inserts_documents_chunks_and_vectors(index):
    chunks = fixture_chunks()
    result = index.apply(batch_of(chunks))
    assert (result.documents_written, result.chunks_written) == (4, len(chunks))
    assert set(index.document_states()) == {"doc-nav", "doc-net", "doc-py", "doc-web"}
    stats = index.stats()
    assert (stats["documents"], stats["chunks"], stats["vectors"]) == (4, 5, 5)


def test_document_states_report_hash_mtime_path_and_verification(loaded):
    state = loaded.document_states()["doc-nav"]
    assert state.content_hash == "doc-nav-v1"
    assert state.mtime == pytest.approx(1700000000.0)
    assert state.source_path == "/corpus/doc-nav.md"
    assert state.last_verified == "2024-05-01"


def test_stamps_set_the_mtime_of_documents_in_and_before_the_batch(loaded):
    new = make_chunk("new-1", "doc-new")
    batch = batch_of([new])
    batch.documents = batch.documents.set_column(
        batch.documents.schema.get_field_index("mtime"),
        "mtime",
        pa.array([None], pa.float64()),
    )
    batch.stamp_mtimes = {"doc-new": 1800000000.5, "doc-nav": 1800000001.0}

    loaded.apply(batch)

    states = loaded.document_states()
    assert states["doc-new"].mtime == pytest.approx(1800000000.5)
    assert states["doc-nav"].mtime == pytest.approx(1800000001.0)
    assert states["doc-net"].mtime == pytest.approx(1700000000.0)


def test_stamps_roll_back_with_a_failed_batch(loaded):
    clash = [make_chunk("nav-9", "doc-a"), make_chunk("nav-9", "doc-b")]
    batch = batch_of(clash)
    batch.stamp_mtimes = {"doc-nav": 1800000001.0}
    with pytest.raises(StoreError):
        loaded.apply(batch)
    assert loaded.document_states()["doc-nav"].mtime == pytest.approx(1700000000.0)


def test_check_finds_nothing_wrong_with_a_sound_index(store, loaded):
    assert store.check_index(loaded.name) == []


def test_apply_replaces_a_changed_document_and_removes_its_old_chunks(loaded):
    new = make_chunk("nav-3", "doc-nav", content="rewritten navigation page")
    result = loaded.apply(batch_of([new], doc_hash="v2"))
    assert result.chunks_deleted == 2
    assert set(loaded.fetch(["nav-1", "nav-2", "nav-3"])) == {"nav-3"}
    assert loaded.document_states()["doc-nav"].content_hash == "doc-nav-v2"
    assert "nav-1" not in ids(loaded.vector_search(vector_for("nav-1"), ALL, 10))
    assert "nav-1" not in ids(loaded.bm25_search("NavigationStack", ALL, 10))


def test_apply_keeps_documents_not_in_the_batch(loaded):
    loaded.apply(batch_of([make_chunk("nav-3", "doc-nav")], doc_hash="v2"))
    assert set(loaded.fetch(["net-1", "py-1"])) == {"net-1", "py-1"}


def test_apply_deletes_documents_with_their_chunks(loaded):
    result = loaded.apply(batch_of([], delete=("doc-net", "doc-py")))
    assert (result.documents_deleted, result.chunks_deleted) == (2, 2)
    assert set(loaded.document_states()) == {"doc-nav", "doc-web"}
    assert loaded.fetch(["net-1", "py-1"]) == {}
    assert loaded.stats()["vectors"] == 3
    assert loaded.bm25_search("URLSession", ALL, 10) == []


def test_apply_document_without_chunks_removes_old_chunks(loaded):
    loaded.apply(batch_of([], extra_docs=("doc-net",), doc_hash="v2"))
    assert loaded.fetch(["net-1"]) == {}
    assert loaded.document_states()["doc-net"].content_hash == "doc-net-v2"


def test_failure_mid_batch_rolls_back_everything(loaded):
    before_states = loaded.document_states()
    replacement = make_chunk("nav-9", "doc-nav", content="replacement text")
    new_doc = make_chunk("new-1", "doc-new")
    clash = make_chunk("nav-9", "doc-new2")  # duplicate chunk_id: fails after the deletes ran
    with pytest.raises(StoreError):
        loaded.apply(batch_of([replacement, new_doc, clash], doc_hash="v2"))
    assert loaded.document_states() == before_states
    assert set(loaded.fetch(["nav-1", "nav-2", "nav-9", "new-1"])) == {"nav-1", "nav-2"}
    assert ids(loaded.vector_search(vector_for("nav-1"), ALL, 1)) == ["nav-1"]
    assert "nav-1" in ids(loaded.bm25_search("NavigationStack", ALL, 10))


def test_vectors_of_the_wrong_dimension_are_rejected(index):
    chunk = make_chunk("c1", "d1")
    bad = np.ones((1, DIM + 1), dtype=np.float32)
    with pytest.raises(StoreError):
        index.apply(batch_of([chunk], vectors=bad))
    assert index.document_states() == {}
