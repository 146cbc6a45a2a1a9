"""Vector search over a sign-code shortlist: the codes and their distances, the shortlist cut,
and search results against exact search (the oracle) with and without filters."""

from __future__ import annotations

import numpy as np
import pytest

from core.store.filters import SearchFilter
from core.store.modes import SHORTLIST_FROM
from core.store.sqlite.columns import FilterColumns
from core.store.sqlite.sign_codes import hamming, rescore, shortlist, sign_codes
from core.store.sqlite.vectors import VectorSnapshot, normalise_rows

DOMAINS = ["ios", "macos", "swift", "python", "general"]


# Low-rank structure plus noise: a query's cosines to its ten nearest rows (~0.55) stand out
# of the bulk (~0) by degrees, as MiniLM's do on the dev corpora. (Isotropic clusters are no
# model of embeddings: within one, every member is equally near.)
TOPICS = np.random.default_rng(9).standard_normal((24, 384)) / np.sqrt(24)


def embeddings(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    rows = rng.standard_normal((n, 24)) @ TOPICS + 0.6 * rng.standard_normal((n, 384))
    return normalise_rows(rows.astype(np.float32))


def snapshot(matrix: np.ndarray, *, codes: bool, seed: int = 1) -> VectorSnapshot:
    rng = np.random.default_rng(seed)
    n = len(matrix)
    versions = rng.choice([0, 130000, 150000, 170000], size=n)
    columns = FilterColumns.from_columns(
        [
            rng.choice(DOMAINS, size=n).tolist(),
            ["apple_docs"] * n,
            [None if v == 0 else int(v) for v in versions],
            [None] * n,
            [False] * n,
            [None] * n,
            [None] * n,
            [None] * n,
        ]
    )
    return VectorSnapshot(
        ("test", "x", 0),
        [f"r{i}" for i in range(n)],
        matrix,
        columns,
        codes=sign_codes(matrix) if codes else None,
    )


def test_the_distance_counts_the_dimensions_whose_signs_differ():
    rng = np.random.default_rng(0)
    rows = rng.standard_normal((50, 100)).astype(np.float32)  # 100 bits: two words, padded
    query = rng.standard_normal(100).astype(np.float32)
    expected = ((rows > 0) != (query > 0)).sum(axis=1)
    assert hamming(sign_codes(rows), query).tolist() == expected.tolist()


def test_rescoring_ranks_only_the_given_rows_by_exact_inner_product():
    matrix = embeddings(2_000, seed=5)
    query = embeddings(1, seed=6)[0]
    rows = np.arange(0, 2_000, 7)
    found, scores = rescore(matrix, query, rows, 10)
    exact = matrix[rows] @ query
    best = rows[np.argsort(-exact)[:10]]
    assert found.tolist() == best.tolist()
    assert scores == pytest.approx(np.sort(exact)[::-1][:10], abs=1e-6)


def test_rescoring_fewer_rows_than_asked_returns_them_all():
    matrix = embeddings(100, seed=5)
    found, _ = rescore(matrix, matrix[3], np.array([3, 50, 99]), 10)
    assert sorted(found.tolist()) == [3, 50, 99] and found[0] == 3


def test_the_shortlist_keeps_the_nearest_and_everything_tied_with_the_last():
    distance = np.array([5, 1, 3, 3, 9, 3, 0], dtype=np.uint16)
    assert shortlist(distance, 3).tolist() == [1, 2, 3, 5, 6]
    assert shortlist(distance, 50).tolist() == list(range(7))


@pytest.fixture(scope="module")
def index() -> tuple[VectorSnapshot, VectorSnapshot, np.ndarray]:
    matrix = embeddings(SHORTLIST_FROM + 10_000, seed=2)
    queries = embeddings(60, seed=3)
    return snapshot(matrix, codes=True), snapshot(matrix, codes=False), queries


def recall(fast: VectorSnapshot, exact: VectorSnapshot, queries, filt: SearchFilter) -> float:
    found = []
    for query in queries:
        truth = {h.chunk_id for h in exact.search(query, filt, 10)}
        hits = {h.chunk_id for h in fast.search(query, filt, 10)}
        found.append(len(hits & truth) / len(truth))
    return float(np.mean(found))


def test_the_shortlist_cuts_where_counting_every_distance_cuts():
    rng = np.random.default_rng(9)
    for size, length in [(10_000, 200), (10_000, 1), (5_000, 4_999), (3_000, 1_000)]:
        distance = rng.binomial(384, 0.5, size).astype(np.int32)
        counted = int(np.searchsorted(np.cumsum(np.bincount(distance)), length))
        assert shortlist(distance, length).tolist() == np.flatnonzero(distance <= counted).tolist()


def test_the_shortlist_finds_the_exact_top_ten(index):
    fast, exact, queries = index
    assert recall(fast, exact, queries, SearchFilter()) >= 0.98


@pytest.mark.parametrize(
    "filt",
    [
        SearchFilter(domains=("swift",), include_user_codebase=False),
        SearchFilter(domains=("ios", "macos"), ios_version_int=140000),
    ],
)
def test_the_shortlist_finds_the_exact_top_ten_under_filters(index, filt):
    fast, exact, queries = index
    assert recall(fast, exact, queries, filt) >= 0.98


def test_every_hit_passes_the_filter_and_a_narrow_filter_still_fills_the_top_k(index):
    fast, _, queries = index
    narrow = SearchFilter(domains=("python",), ios_version_int=140000)
    admitted = fast.mask(narrow)
    assert admitted is not None and 10 < admitted.sum() < 0.1 * len(fast)
    rows = {f"r{i}" for i in np.flatnonzero(admitted)}
    hits = fast.search(queries[0], narrow, 10)
    assert len(hits) == 10 and {h.chunk_id for h in hits} <= rows


def test_the_shortlists_scores_are_exact_cosines(index):
    fast, _, queries = index
    for hit in fast.search(queries[1], SearchFilter(), 10):
        row = int(hit.chunk_id[1:])
        assert hit.score == pytest.approx(float(fast.matrix[row] @ queries[1]), abs=1e-5)


def test_an_index_below_the_shortlist_size_has_no_codes_and_is_searched_exactly():
    rows = [
        (
            f"c{i}",
            "ios",
            "apple_docs",
            None,
            None,
            0,
            None,
            None,
            None,
            i,
            f"d{i}",
            np.ones(4, "<f4").tobytes(),
        )
        for i in range(3)
    ]
    small = VectorSnapshot.from_rows(("t", "x", 0), rows, 4, codes_from=4)
    assert small.codes is None
    assert small.search_path(np.ones(4, "<f4") / 2, SearchFilter(), 2)[1] == "exact"
    assert VectorSnapshot.from_rows(("t", "x", 0), rows, 4, codes_from=3).codes is not None
    assert VectorSnapshot.from_rows(("t", "x", 0), rows, 4, codes_from=None).codes is None


def test_a_shortlisted_search_says_so_and_a_restrictive_filter_is_scored_exactly(index):
    fast, _, queries = index
    assert fast.search_path(queries[0], SearchFilter(), 10)[1] == "sign-codes"
    # Under a tenth of the rows: fewer than SHORTLIST_SHARE_OF_WORK shortlists' worth.
    few = SearchFilter(domains=("python",), ios_version_int=140000)
    assert fast.search_path(queries[0], few, 10)[1] == "exact"


def test_a_snapshot_loaded_in_batches_equals_one_loaded_at_once():
    matrix = embeddings(25, seed=4)
    rows = [
        (f"c{i}", "ios", "apple_docs", None, None, 0, None, None, None, i, "d", matrix[i].tobytes())
        for i in range(25)
    ]
    whole = VectorSnapshot.from_rows(("t", "x", 0), rows, 384, codes_from=None)
    batches = [rows[i : i + 7] for i in range(0, 25, 7)]
    # The expected size may be stale in either direction (rows written since it was counted).
    for size in (25, 10, 40):
        batched = VectorSnapshot.from_batches(("t", "x", 0), batches, 384, size, None)
        assert batched.chunk_ids == whole.chunk_ids
        assert np.array_equal(batched.matrix, whole.matrix)
        assert batched.columns.domain_codes.tolist() == whole.columns.domain_codes.tolist()
