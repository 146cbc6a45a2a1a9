"""The store contract's read side, as reusable tests: vector and BM25 search, filters, fetch,
the names links are made of, verification dates and statistics. Pulled into a backend's test
module next to tests.support.store_contract, whose fixtures (`index`, `loaded`) they use.
"""

from __future__ import annotations

import random
from dataclasses import replace

import numpy as np
import pytest

from chunkers.model import Chunk
from core.store.contract import CHUNK_SCHEMA, FUSION_COLUMNS, Declaration
from core.store.filters import SearchFilter
from core.store.text_key import text_key
from tests.support.store_contract import (
    ALL,
    DIM,
    MODEL,
    TODAY,
    batch_of,
    fixture_chunks,
    ids,
    make_chunk,
    vector_for,
)

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


def test_fetch_light_returns_what_fetch_returns_of_the_fusion_columns(loaded):
    wanted = ["web-1", "nav-2", "py-1", "net-1"]
    whole, light = loaded.fetch(wanted), loaded.fetch_light(wanted)
    assert set(light) == set(wanted)
    for chunk_id, row in light.items():
        assert set(row) == set(FUSION_COLUMNS) and "content" not in row
        same = {k: whole[chunk_id][k] for k in FUSION_COLUMNS if k != "text_key"}
        assert {k: v for k, v in row.items() if k != "text_key"} == same, chunk_id


def test_every_chunk_is_stored_with_the_text_key_of_its_content(loaded):
    contents = {c.chunk_id: c.content for c in fixture_chunks()}
    light = loaded.fetch_light(list(contents))
    assert {cid: row["text_key"] for cid, row in light.items()} == {
        cid: text_key(content) for cid, content in contents.items()
    }


def test_fetch_light_leaves_out_unknown_ids(loaded):
    assert set(loaded.fetch_light(["nav-1", "nope"])) == {"nav-1"}
    assert loaded.fetch_light([]) == {}


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
                make_chunk("s-1", "doc-s", chunk_index=1, symbol="TripStore.save", kind="function"),
                make_chunk("p-0", "doc-p", symbol=None),
            ]
        )
    )
    assert sorted(index.chunk_symbols(), key=lambda d: d.chunk_id) == [
        Declaration("TripStore", "class", "doc-s", "s-0"),
        Declaration("TripStore.save", "function", "doc-s", "s-1"),
    ]


def test_chunk_symbols_follow_re_ingest_and_deletion(index):
    index.apply(batch_of([make_chunk("s-0", "doc-s", symbol="TripStore", kind="class")]))
    index.apply(batch_of([make_chunk("s-0", "doc-s", symbol="TripArchive", kind="class")]))
    assert [d.symbol for d in index.chunk_symbols()] == ["TripArchive"]
    index.apply(batch_of([], delete=("doc-s",)))
    assert index.chunk_symbols() == []


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


def test_the_paths_searches_took_are_the_paths_the_stats_name(loaded):
    stats = loaded.stats()
    assert loaded.search_paths() == {}  # nothing searched yet
    loaded.vector_search(vector_for("net-1"), ALL, 3)
    loaded.bm25_search("navigation stack", ALL, 3)
    paths = loaded.search_paths()
    assert paths == {"keyword_path": stats["keyword_path"], "vector_path": stats["vector_path"]}


def test_chunk_replaced_with_changed_metadata_is_filtered_by_new_values(loaded):
    chunk = next(c for c in fixture_chunks() if c.chunk_id == "net-1")
    loaded.apply(batch_of([replace(chunk, domain="web")], doc_hash="v2"))
    ios_only = SearchFilter(domains=("ios",))
    assert "net-1" not in ids(loaded.vector_search(vector_for("net-1"), ios_only, 10))
    assert "net-1" not in ids(loaded.bm25_search("URLSession", ios_only, 10))


# -- what fusion calibration reads and writes ------------------------------------------


def test_a_sample_of_chunk_ids_is_bounded_and_the_same_in_any_load_order(store, loaded):
    sample = loaded.sample_chunk_ids(3)
    assert len(sample) == 3 and set(sample) <= {c.chunk_id for c in fixture_chunks()}
    assert loaded.sample_chunk_ids(3) == sample
    other = store.open_index(f"{loaded.name}_rev", create=True)
    try:
        other.bind_model(MODEL, DIM)
        by_document: dict[str, list] = {}
        for chunk in fixture_chunks():
            by_document.setdefault(chunk.doc_id, []).append(chunk)
        for chunks in reversed(list(by_document.values())):
            other.apply(batch_of(chunks))
        assert other.sample_chunk_ids(3) == sample
    finally:
        other.close()
        store.drop_index(f"{loaded.name}_rev")


def test_a_sample_larger_than_the_index_is_every_chunk(loaded):
    assert sorted(loaded.sample_chunk_ids(100)) == sorted(c.chunk_id for c in fixture_chunks())


def test_the_fusion_calibration_is_kept_and_can_be_cleared(store, loaded):
    assert loaded.fusion_calibration() is None
    loaded.record_fusion_calibration('{"rule": "rrf"}')
    reopened = store.open_index(loaded.name)
    try:
        assert reopened.fusion_calibration() == '{"rule": "rrf"}'
    finally:
        reopened.close()
    loaded.record_fusion_calibration(None)
    assert loaded.fusion_calibration() is None


def test_the_bm25_idf_falls_as_more_chunks_hold_the_term(loaded):
    assert loaded.bm25_idf(1000, 1) > loaded.bm25_idf(1000, 100) > 0
