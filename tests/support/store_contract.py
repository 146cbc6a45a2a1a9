"""The contract every index store honours, as reusable tests.

A backend's test module defines a `store` fixture (an empty `core.store.contract.Store`) and pulls
these in with `from tests.support.store_contract import *`. Nothing here knows the backend: tests
go through the `Store` / `IndexStore` protocols only, and each opens its own uniquely named
index and drops it afterwards, so a shared server is fine.
"""

from __future__ import annotations

import contextlib
import json
import random
import uuid
import zlib
from dataclasses import replace
from datetime import date
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from chunkers.model import Chunk
from core.store.contract import CHUNK_SCHEMA, LoadBatch, ModelMismatch, StoreError, UnknownIndex
from core.store.filters import SearchFilter
from loaders.arrow_tables import chunks_to_table, documents_to_table
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
) -> LoadBatch:
    """A batch writing every document of `chunks` (plus `extra_docs` with no chunks)."""
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
        documents=docs, chunks=chunks_to_table(chunks), vectors=vectors, delete_doc_ids=list(delete)
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


# -- vector search ------------------------------------------------------------------------


def test_vector_search_returns_the_nearest_chunk_first(loaded):
    noise = np.random.default_rng(1).normal(scale=0.05, size=DIM).astype(np.float32)
    hits = loaded.vector_search(vector_for("net-1") + noise, ALL, 3)
    assert hits[0].chunk_id == "net-1"
    assert hits[0].score > 0.9


def test_vector_search_scores_are_cosine_and_descending(loaded):
    hits = loaded.vector_search(vector_for("py-1") * 7.0, ALL, 5)
    assert hits[0].score == pytest.approx(1.0, abs=1e-5)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert all(-1.0 - 1e-5 <= h.score <= 1.0 + 1e-5 for h in hits)


def test_vector_search_returns_at_most_k(loaded):
    assert len(loaded.vector_search(vector_for("x"), ALL, 2)) == 2
    assert len(loaded.vector_search(vector_for("x"), ALL, 50)) == 5


def test_vector_search_on_empty_index_returns_nothing(index):
    assert index.vector_search(vector_for("x"), ALL, 5) == []


def test_vector_search_sees_writes_made_after_an_earlier_search(loaded):
    assert ids(loaded.vector_search(vector_for("late-1"), ALL, 1)) != ["late-1"]
    loaded.apply(batch_of([make_chunk("late-1", "doc-late")]))
    assert ids(loaded.vector_search(vector_for("late-1"), ALL, 1)) == ["late-1"]


def test_second_handle_sees_writes_of_the_first(store, loaded):
    other = store.open_index(loaded.name)
    try:
        other.vector_search(vector_for("x"), ALL, 1)  # warm the reader's state
        loaded.apply(batch_of([], delete=("doc-net",)))
        assert "net-1" not in ids(other.vector_search(vector_for("net-1"), ALL, 10))
    finally:
        other.close()


# -- filters: bulk implementations must equal SearchFilter.admits ----------------------------

DOMAINS = ["ios", "web", "python", None]
SOURCES = ["apple_docs", "user_codebase", "wwdc", "mdn"]
VERSIONS = [None, 150000, 160000, 170000, 180000]
FRAMEWORKS = ["SwiftUI", "UIKit", "Foundation", "Combine"]
VERIFIED = [None, "2023-01-01", "2024-05-15", "2024-05-31T23:59:59Z", "2024-06-01", ""]


def random_chunks(rng: random.Random, count: int) -> list[Chunk]:
    chunks = []
    for i in range(count):
        chunks.append(
            make_chunk(
                f"r{i:04d}",
                f"rdoc{i // 4}",
                chunk_index=i % 4,
                content=f"common filler {i}",
                source=rng.choice(SOURCES),
                domain=rng.choice(DOMAINS),
                ios_version_min_int=rng.choice(VERSIONS),
                ios_version_max_int=rng.choice(VERSIONS),
                deprecated=rng.random() < 0.3,
                deprecated_in_int=rng.choice(VERSIONS),
                framework_tags=rng.sample(FRAMEWORKS, rng.randint(0, 3)),
                last_verified=rng.choice(VERIFIED),
            )
        )
    return chunks


def maybe_subset(rng: random.Random, values: list, extra: str) -> tuple | None:
    if rng.random() < 0.35:
        return None
    pool = [v for v in values if v is not None] + [extra]
    return tuple(rng.sample(pool, rng.randint(0, 3)))


def random_filter(rng: random.Random) -> SearchFilter:
    return SearchFilter(
        domains=maybe_subset(rng, DOMAINS, "vc"),
        sources=maybe_subset(rng, SOURCES, "stack_overflow"),
        include_user_codebase=rng.random() < 0.6,
        ios_version_int=rng.choice([None, 150000, 160000, 165000, 170000, 190000]),
        include_deprecated=rng.random() < 0.3,
        frameworks_any=maybe_subset(rng, FRAMEWORKS, "MapKit"),
        fresh_within_days=rng.choice([None, None, 0, 1, 30, 1000]),
        today=TODAY,
    )


@pytest.fixture
def random_loaded(index):
    chunks = random_chunks(random.Random(7), 240)
    index.apply(batch_of(chunks))
    return index, chunks


def test_vector_search_filter_equals_admits(random_loaded):
    index, chunks = random_loaded
    rng = random.Random(11)
    for _ in range(300):
        filt = random_filter(rng)
        expected = {c.chunk_id for c in chunks if filt.admits(c.to_dict())}
        got = ids(index.vector_search(vector_for("q"), filt, len(chunks)))
        assert set(got) == expected, filt
        assert len(got) == len(expected)


def test_bm25_search_filter_equals_admits(random_loaded):
    index, chunks = random_loaded
    rng = random.Random(13)
    for _ in range(150):
        filt = random_filter(rng)
        expected = {c.chunk_id for c in chunks if filt.admits(c.to_dict())}
        assert set(ids(index.bm25_search("common", filt, len(chunks)))) == expected, filt


def test_vector_search_with_filter_still_returns_k_hits(random_loaded):
    index, chunks = random_loaded
    filt = SearchFilter(domains=("web",), include_user_codebase=False)
    admitted = [c for c in chunks if filt.admits(c.to_dict())]
    assert len(admitted) > 5
    assert len(index.vector_search(vector_for("q"), filt, 5)) == 5


def test_freshness_filter_uses_mark_verified_dates(loaded):
    stale = SearchFilter(fresh_within_days=30, today=TODAY)
    assert "nav-1" in ids(loaded.vector_search(vector_for("nav-1"), stale, 10))  # unknown date
    assert "web-1" not in ids(loaded.vector_search(vector_for("web-1"), stale, 10))  # 2023
    loaded.mark_verified(["doc-web"], "2024-05-20")
    assert "web-1" in ids(loaded.vector_search(vector_for("web-1"), stale, 10))
    assert "web-1" in ids(loaded.bm25_search("fetch", stale, 10))


# -- BM25 ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("navigation", "nav-1"),
        ("NavigationStack", "nav-1"),
        ("url session", "net-1"),
        ("config", "py-1"),
        ("parse_config_file", "py-1"),
        ("http2", "web-1"),
    ],
)
def test_bm25_finds_identifier_parts(loaded, query, expected):
    assert expected in ids(loaded.bm25_search(query, ALL, 10))


def test_bm25_ranks_the_better_match_first_with_positive_scores(loaded):
    hits = loaded.bm25_search("NavigationStack present views", ALL, 10)
    assert hits[0].chunk_id == "nav-1"
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert hits[0].score > 0


def test_bm25_returns_at_most_k(loaded):
    assert len(loaded.bm25_search("navigation view", ALL, 1)) == 1


HOSTILE = [
    '"',
    '""',
    "'",
    "AND",
    "OR NOT",
    "a AND OR b",
    "NEAR(",
    "NEAR(navigation view, 2)",
    "*",
    "navi*",
    "-",
    "-navigation",
    "(",
    ")",
    "((navigation)",
    "body:navigation",
    "{body}: navigation",
    "^navigation",
    "+",
    "navigation'); DROP TABLE chunks; --",
    "\x00",
    "",
    "   ",
    "😀 navigation",
    "\\",
    "%_",
]


@pytest.mark.parametrize("query", HOSTILE)
def test_bm25_hostile_query_does_not_raise(loaded, query):
    assert isinstance(loaded.bm25_search(query, ALL, 5), list)
    assert loaded.stats()["chunks"] == 5


def test_bm25_hostile_query_still_matches_its_words(loaded):
    assert "nav-1" in ids(loaded.bm25_search('"NavigationStack" AND (NEAR(*', ALL, 5))


def test_bm25_query_of_unknown_words_returns_nothing(loaded):
    assert loaded.bm25_search("zzzqqq", ALL, 5) == []


# -- fetch, mark_verified, stats ------------------------------------------------------------


def test_fetch_returns_full_decoded_chunks(loaded):
    original = {c.chunk_id: c.to_dict() for c in fixture_chunks()}
    fetched = loaded.fetch(["web-1", "nav-2", "py-1"])
    assert set(fetched) == {"web-1", "nav-2", "py-1"}
    for chunk_id, row in fetched.items():
        assert row == {k: original[chunk_id][k] for k in CHUNK_SCHEMA.names}, chunk_id


def test_fetch_leaves_out_unknown_ids(loaded):
    assert set(loaded.fetch(["nav-1", "nope"])) == {"nav-1"}
    assert loaded.fetch([]) == {}


def test_document_titles_name_each_titled_documents_first_chunk(index):
    index.apply(
        batch_of(
            [
                make_chunk("a-0", "doc-a", title="Grand Central Dispatch"),
                make_chunk("a-1", "doc-a", chunk_index=1, title="Grand Central Dispatch"),
                make_chunk("b-0", "doc-b", title=None),
                make_chunk("c-0", "doc-c", title="Swift Concurrency"),
            ]
        )
    )
    assert sorted(index.document_titles()) == [
        ("Grand Central Dispatch", "a-0"),
        ("Swift Concurrency", "c-0"),
    ]


def test_chunk_symbols_name_every_declaring_chunk(index):
    index.apply(
        batch_of(
            [
                make_chunk("s-0", "doc-s", symbol="TripStore", kind="class"),
                make_chunk("s-1", "doc-s", chunk_index=1, symbol="TripStore.save"),
                make_chunk("p-0", "doc-p", symbol=None),
            ]
        )
    )
    assert sorted(index.chunk_symbols()) == [("TripStore", "s-0"), ("TripStore.save", "s-1")]


def test_document_titles_follow_deletions(index):
    index.apply(batch_of([make_chunk("a-0", "doc-a", title="Grand Central Dispatch")]))
    index.apply(batch_of([], delete=("doc-a",)))
    assert index.document_titles() == []


def test_mark_verified_updates_documents_and_their_chunks(loaded):
    assert loaded.mark_verified(["doc-nav", "missing"], "2024-06-01") == 1
    assert loaded.document_states()["doc-nav"].last_verified == "2024-06-01"
    rows = loaded.fetch(["nav-1", "nav-2", "net-1"])
    assert [rows[c]["last_verified"] for c in ("nav-1", "nav-2")] == ["2024-06-01"] * 2
    assert rows["net-1"]["last_verified"] is None


def test_stats_report_counts_and_model(loaded):
    stats = loaded.stats()
    assert stats["documents"] == 4
    assert stats["chunks"] == stats["vectors"] == 5
    assert (stats["model_id"], stats["dim"]) == (MODEL, DIM)


def test_chunk_replaced_with_changed_metadata_is_filtered_by_new_values(loaded):
    chunk = next(c for c in fixture_chunks() if c.chunk_id == "net-1")
    loaded.apply(batch_of([replace(chunk, domain="web")], doc_hash="v2"))
    ios_only = SearchFilter(domains=("ios",))
    assert "net-1" not in ids(loaded.vector_search(vector_for("net-1"), ios_only, 10))
    assert "net-1" not in ids(loaded.bm25_search("URLSession", ios_only, 10))
