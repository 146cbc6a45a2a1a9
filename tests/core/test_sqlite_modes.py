"""The embedded store searches by the vector path its modes give for the index's size, and
says which: in its stats and after each search (core/store/modes.py)."""

from __future__ import annotations

from pathlib import Path

from core.store.modes import LONG_LIVED, ONE_SHOT, StoreModes
from core.store.sqlite.store import SQLiteStore
from tests.support.store_contract import (
    ALL,
    DIM,
    MODEL,
    batch_of,
    fixture_chunks,
    make_chunk,
    vector_for,
)


def loaded_store(directory: Path, modes: StoreModes) -> SQLiteStore:
    store = SQLiteStore(directory, modes=modes)
    index = store.open_index("docs", create=True)
    index.bind_model(MODEL, DIM)
    index.apply(batch_of(fixture_chunks()))
    index.close()
    return store


def test_the_long_lived_and_one_shot_modes_differ_only_in_the_keyword_path():
    assert LONG_LIVED.keyword == "postings" and ONE_SHOT.keyword == "fts5"
    assert (LONG_LIVED.shortlist_from, LONG_LIVED.analysis) == (
        ONE_SHOT.shortlist_from,
        ONE_SHOT.analysis,
    )


def test_an_index_below_the_shortlist_size_is_searched_exactly(tmp_path):
    index = loaded_store(tmp_path, ONE_SHOT).open_index("docs")
    try:
        assert index.stats()["vector_path"] == "exact"
        index.vector_search(vector_for("net-1"), ALL, 3)
        assert index.search_paths()["vector_path"] == "exact"
    finally:
        index.close()


def test_an_index_at_the_shortlist_size_is_searched_by_sign_codes_with_the_same_top_hit(
    tmp_path,
):
    # More rows than SHORTLIST_SHARE_OF_WORK shortlists of the minimum length (4 x 1,000).
    chunks = [make_chunk(f"c{n}", f"d{n}") for n in range(4_500)]
    store = SQLiteStore(tmp_path, modes=StoreModes(shortlist_from=4_000))
    index = store.open_index("many", create=True)
    index.bind_model(MODEL, DIM)
    index.apply(batch_of(chunks))
    exact = SQLiteStore(tmp_path).open_index("many")  # the same file, opened one-shot
    try:
        assert index.stats()["vector_path"] == "sign-codes"
        assert exact.stats()["vector_path"] == "exact"
        found = index.vector_search(vector_for("c7"), ALL, 3)
        assert found[0] == exact.vector_search(vector_for("c7"), ALL, 3)[0]
        assert found[0].chunk_id == "c7"
        assert index.search_paths()["vector_path"] == "sign-codes"
        assert exact.search_paths()["vector_path"] == "exact"
    finally:
        index.close()
        exact.close()


def test_an_index_that_never_shortlists_reports_exact_at_any_size(tmp_path):
    index = loaded_store(tmp_path, StoreModes(shortlist_from=None)).open_index("docs")
    try:
        assert index.stats()["vector_path"] == "exact"
    finally:
        index.close()
