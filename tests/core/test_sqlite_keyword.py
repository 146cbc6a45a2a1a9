"""The SQLite store's in-memory keyword search: FTS5's own bm25() scores (the reference),
under every filter, after writes, and from the postings saved beside the index; used by a
store opened with the postings keyword path, and only by one."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from core.store.filters import SearchFilter
from core.store.modes import LONG_LIVED
from core.store.sqlite.keyword import KEYWORDS, KEYWORDS_SUFFIX
from core.store.sqlite.store import SQLiteStore
from tests.support import sqlite_files
from tests.support.store_contract import DIM, MODEL, batch_of, make_chunk

one_shot_store = sqlite_files.store  # the shared fixture: opened as a one-shot command does


@pytest.fixture
def store(tmp_path: Path) -> SQLiteStore:
    """Opened as the worker opens it: keyword searches from the postings."""
    return SQLiteStore(tmp_path / "indexes", modes=LONG_LIVED)


# A Zipf-like vocabulary: a few words in most chunks (the costly case for FTS5), identifiers
# the analyzer splits, and non-ASCII words.
COMMON = ["view", "data", "model", "swift", "value", "state"]
WORDS = [f"term{i}" for i in range(300)] + ["café", "naïve", "東京", "straße", "Ωmega"]
IDENTIFIERS = ["NavigationStack", "fetch_user", "URLSession", "HTTP2Client", "__init__"]
DOMAINS = ["ios", "macos", "swift"]
FRAMEWORKS = ["SwiftUI", "SwiftData", "CloudKit", "UIKit"]


def random_chunk(rng: random.Random, number: int):
    words = [rng.choice(COMMON) for _ in range(rng.randint(0, 30))]
    words += [WORDS[min(int(rng.paretovariate(1.2)) - 1, len(WORDS) - 1)] for _ in range(40)]
    words += rng.sample(IDENTIFIERS, rng.randint(0, 2))
    rng.shuffle(words)
    low = rng.choice([None, 130000, 150000, 170000])
    return make_chunk(
        f"c{number}",
        f"d{number // 3}",
        chunk_index=number % 3,
        content=" ".join(words[: rng.randint(1, len(words))]),
        context=rng.choice(["", "Overview", "NavigationStack > Usage"]),
        domain=rng.choice(DOMAINS),
        source=rng.choice(["apple_docs", "user_codebase", "wwdc"]),
        framework_tags=rng.sample(FRAMEWORKS, rng.randint(0, 2)),
        ios_version_min_int=low,
        ios_version_max_int=None if low is None or rng.random() < 0.7 else low + 40000,
        deprecated=rng.random() < 0.1,
    )


def random_filter(rng: random.Random) -> SearchFilter:
    return SearchFilter(
        domains=rng.choice([None, ("ios",), ("macos", "swift")]),
        include_user_codebase=rng.random() < 0.7,
        ios_version_int=rng.choice([None, 140000, 170000]),
        include_deprecated=rng.random() < 0.3,
        frameworks_any=rng.choice([None, ("SwiftUI",), ("CloudKit", "UIKit")]),
    )


def random_query(rng: random.Random) -> str:
    pool = COMMON + WORDS[:40] + WORDS[-5:] + IDENTIFIERS + ["absentword"]
    return " ".join(rng.sample(pool, rng.randint(1, 5)))


@pytest.fixture
def index(store):
    opened = store.open_index("docs", create=True)
    opened.bind_model(MODEL, DIM)
    rng = random.Random(7)
    opened.apply(batch_of([random_chunk(rng, n) for n in range(600)]))
    opened.warm()
    yield opened
    opened.close()


def same_ranking(index, query: str, filt: SearchFilter, k: int = 50) -> None:
    mine = index.bm25_search(query, filt, k)
    reference = index.fts_bm25_search(query, filt, k)
    assert [h.score for h in mine] == pytest.approx([h.score for h in reference], abs=1e-9)
    scores = {h.chunk_id: h.score for h in reference}
    for hit in mine:
        if hit.chunk_id in scores:
            assert hit.score == pytest.approx(scores[hit.chunk_id], abs=1e-9)
        else:  # equal scores at the cut: either chunk may be the one kept
            assert hit.score == pytest.approx(reference[-1].score, abs=1e-9)


def test_scores_equal_fts5_bm25_on_a_reference_corpus(index):
    assert current(index) is not None  # the searches below use the postings
    rng = random.Random(11)
    for _ in range(150):
        same_ranking(index, random_query(rng), SearchFilter())


def test_scores_equal_fts5_bm25_under_random_filters(index):
    assert current(index) is not None
    rng = random.Random(12)
    for _ in range(150):
        same_ranking(index, random_query(rng), random_filter(rng))


def test_a_word_in_most_chunks_still_ranks_like_fts5(index):
    same_ranking(index, "view data", SearchFilter(), k=500)


def test_common_words_are_looked_up_only_for_rows_a_rarer_word_matched(index):
    # "view" and "data" are in most chunks; "term10" in a few: once the few are scored,
    # no chunk with only the common words can reach the top 5.
    snapshot = current(index)
    postings = snapshot.postings
    terms = ["term10", "view", "data"]
    everything = sum(
        int(postings.starts[postings.terms[t] + 1] - postings.starts[postings.terms[t]])
        for t in terms
    )
    _, scored = postings.search_counting(terms, None, 5)
    assert scored < everything / 2
    same_ranking(index, " ".join(terms), SearchFilter(), k=5)


def test_pruned_searches_rank_like_fts5_for_every_k_and_filter(index):
    assert current(index) is not None
    rng = random.Random(14)
    for _ in range(150):
        query = " ".join([rng.choice(WORDS[20:300]), *rng.sample(COMMON, rng.randint(1, 4))])
        same_ranking(index, query, random_filter(rng), k=rng.choice([1, 3, 10, 50]))


def test_peaks_bound_every_posting_of_their_term(index):
    postings = current(index).postings
    for term in list(postings.terms.values())[:200]:
        start, end = int(postings.starts[term]), int(postings.starts[term + 1])
        counts = postings.counts[start:end].astype(float)
        tf = counts * 2.2 / (counts + postings.length_norm[postings.rows[start:end]])
        assert postings.peaks[term] == pytest.approx(tf.max())


def test_a_query_of_unknown_words_finds_nothing(index):
    assert index.bm25_search("absentword nowhere", SearchFilter(), 10) == []


def current(index):
    with index._read_lock:
        return KEYWORDS.get(index._generation_key())


def test_after_a_write_fts5_answers_until_the_postings_are_rebuilt_in_the_background(store, index):
    rng = random.Random(13)
    index.apply(batch_of([make_chunk("fresh", "d-new", content="zyzzyva zyzzyva view")]))
    index.apply(batch_of([], delete=("d0",)))
    assert current(index) is None
    assert [h.chunk_id for h in index.bm25_search("zyzzyva", SearchFilter(), 5)] == ["fresh"]
    assert index.search_paths()["keyword_path"] == "fts5"
    store.refresher.wait(str(index.path.resolve()), timeout=60)
    assert current(index) is not None
    assert [h.chunk_id for h in index.bm25_search("zyzzyva", SearchFilter(), 5)] == ["fresh"]
    assert index.search_paths()["keyword_path"] == "postings"
    found = {h.chunk_id for h in index.bm25_search("view", SearchFilter(), 700)}
    assert not {"c0", "c1", "c2"} & found
    for _ in range(30):
        same_ranking(index, random_query(rng), random_filter(rng))


def test_a_one_shot_store_asks_fts5_and_saves_nothing_even_warmed(one_shot_store):
    opened = one_shot_store.open_index("cold", create=True)
    opened.bind_model(MODEL, DIM)
    opened.apply(batch_of([make_chunk("a", "d-a", content="zyzzyva")]))
    opened.warm()
    assert [h.chunk_id for h in opened.bm25_search("zyzzyva", SearchFilter(), 5)] == ["a"]
    assert opened.search_paths() == {"keyword_path": "fts5"}
    assert current(opened) is None
    assert not Path(f"{opened.path}{KEYWORDS_SUFFIX}").exists()
    opened.close()


def test_a_warmed_postings_store_answers_from_the_postings_and_says_so(index):
    assert current(index) is not None
    same_ranking(index, "view term3", SearchFilter())
    assert index.search_paths() == {"keyword_path": "postings"}
    assert index.stats()["keyword_path"] == "postings"


def test_the_same_file_answers_by_the_path_each_store_was_opened_with(index, tmp_path):
    one_shot = SQLiteStore(tmp_path / "indexes").open_index("docs")
    try:
        assert current(index) is not None  # the postings are loaded in this process
        one_shot.bm25_search("view term3", SearchFilter(), 10)
        assert one_shot.search_paths() == {"keyword_path": "fts5"}
        assert one_shot.stats()["keyword_path"] == "fts5"
    finally:
        one_shot.close()


def test_the_postings_are_saved_beside_the_index_and_reused(index):
    index.keywords()
    saved = Path(f"{index.path}{KEYWORDS_SUFFIX}")
    assert saved.is_file()
    KEYWORDS.evict(str(index.path.resolve()))
    stamp = saved.stat().st_mtime_ns
    same_ranking(index, "view term3 NavigationStack", SearchFilter())
    assert saved.stat().st_mtime_ns == stamp  # loaded, not rebuilt


def test_saved_postings_of_an_older_generation_are_rebuilt(index):
    index.keywords()
    saved = Path(f"{index.path}{KEYWORDS_SUFFIX}")
    old = saved.read_bytes()
    index.apply(batch_of([make_chunk("fresh", "d-new", content="zyzzyva")]))
    saved.write_bytes(old)  # as if another process saved the earlier generation last
    KEYWORDS.evict(str(index.path.resolve()))
    assert [h.chunk_id for h in index.bm25_search("zyzzyva", SearchFilter(), 5)] == ["fresh"]


def test_unreadable_saved_postings_only_mean_a_rebuild(index):
    index.keywords()
    saved = Path(f"{index.path}{KEYWORDS_SUFFIX}")
    saved.write_bytes(b"not an npz file")
    KEYWORDS.evict(str(index.path.resolve()))
    same_ranking(index, "view term3", SearchFilter())


def test_dropping_an_index_removes_its_saved_postings(store, index):
    index.keywords()
    saved = Path(f"{index.path}{KEYWORDS_SUFFIX}")
    store.drop_index("docs")
    assert not saved.exists()
