"""Search on the TiDB store (MariaDB standing in): SQL BM25 against a reference computation,
the vector over-fetch under selective filters, and the one-statement hybrid search."""

from __future__ import annotations

import json
import math
import uuid
from collections import Counter

import numpy as np
import pymysql
import pytest

from core.store.analyzer import analyze, analyze_query
from core.store.filters import SearchFilter
from core.store.tidb.search import VectorPlan
from tests.core.test_tidb_store import make_store, pytestmark  # noqa: F401 - same skip and marker
from tests.support.paths import FIXTURES
from tests.support.store_contract import ALL, DIM, MODEL, batch_of, ids, make_chunk, vector_for

CORPUS = FIXTURES / "tidb" / "bm25_corpus.jsonl"
QUERIES = [
    "NavigationStack",
    "url session data task",
    "parse config file",
    "async await concurrency",
    "the view",
    "HTTP2Client",
    "swiftdata model container",
]


def reference_bm25(docs: dict[str, str], query: str, k1: float = 1.2, b: float = 0.75):
    """Okapi BM25 written out directly from the formula (Robertson & Zaragoza 2009, with
    Lucene's non-negative idf), over the embedded index's analyzer."""
    tokens = {cid: analyze(text) for cid, text in docs.items()}
    n = len(tokens)
    avgdl = sum(len(t) for t in tokens.values()) / n
    scores: dict[str, float] = {}
    for term in analyze_query(query):
        df = sum(1 for t in tokens.values() if term in t)
        if not df:
            continue
        idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
        for cid, toks in tokens.items():
            tf = Counter(toks)[term]
            if tf:
                norm = tf + k1 * (1 - b + b * len(toks) / avgdl)
                scores[cid] = scores.get(cid, 0.0) + idf * tf * (k1 + 1) / norm
    return scores


@pytest.fixture
def store(tmp_path):
    return make_store(tmp_path, VectorPlan.ANN)


@pytest.fixture
def index(store):
    name = f"search_{uuid.uuid4().hex[:10]}"
    opened = store.open_index(name, create=True)
    opened.bind_model(MODEL, DIM)
    yield opened
    opened.close()
    store.drop_index(name)


@pytest.fixture
def corpus_index(index):
    records = [json.loads(line) for line in CORPUS.read_text().splitlines() if line.strip()]
    chunks = [make_chunk(r["chunk_id"], r["doc_id"], **r["fields"]) for r in records]
    index.apply(batch_of(chunks))
    texts = {c.chunk_id: " ".join(p for p in (c.context, c.content) if p) for c in chunks}
    return index, texts


# -- BM25 -------------------------------------------------------------------------------------


@pytest.mark.parametrize("query", QUERIES)
def test_sql_bm25_equals_the_reference_computation(corpus_index, query):
    index, texts = corpus_index
    expected = reference_bm25(texts, query)
    hits = index.bm25_search(query, ALL, 100)
    assert expected, "every query matches something in the corpus"
    assert {h.chunk_id for h in hits} == set(expected)
    for hit in hits:
        assert hit.score == pytest.approx(expected[hit.chunk_id], abs=1e-6), hit.chunk_id


def test_sql_bm25_tracks_corpus_statistics_after_a_deletion(corpus_index):
    index, texts = corpus_index
    index.apply(batch_of([], delete=("doc-swift",)))
    remaining = {cid: t for cid, t in texts.items() if not cid.startswith("swift")}
    expected = reference_bm25(remaining, "view model")
    for hit in index.bm25_search("view model", ALL, 100):
        assert hit.score == pytest.approx(expected[hit.chunk_id], abs=1e-6)


# -- vector search under selective filters ----------------------------------------------------


@pytest.fixture
def haystack(index):
    """400 chunks of which 6 are in domain "rare", all far from the query vector."""
    rng = np.random.default_rng(5)
    query = vector_for("query")
    chunks, vectors = [], []
    for i in range(400):
        rare = i % 67 == 3
        chunks.append(make_chunk(f"h{i:03d}", f"hdoc{i // 10}", domain="rare" if rare else "ios"))
        v = rng.normal(size=DIM).astype(np.float32)
        # Common chunks lean towards the query, rare ones away: an over-fetch of the nearest
        # rows finds no rare chunk until it reads nearly everything.
        v = v + (3.0 if not rare else -3.0) * query
        vectors.append(v / np.linalg.norm(v))
    index.apply(batch_of(chunks, vectors=np.stack(vectors)))
    return index, chunks, np.stack(vectors), query


def test_a_highly_selective_filter_still_returns_k_nearest(haystack):
    index, chunks, vectors, query = haystack
    rare = SearchFilter(domains=("rare",), include_user_codebase=False)
    hits = index.vector_search(query, rare, 5)
    admitted = [i for i, c in enumerate(chunks) if c.domain == "rare"]
    similarity = vectors[admitted] @ query
    expected = [chunks[admitted[i]].chunk_id for i in np.argsort(-similarity)[:5]]
    assert ids(hits) == expected
    assert [h.score for h in hits] == pytest.approx(sorted(similarity, reverse=True)[:5], abs=1e-5)


def test_unfiltered_ann_search_equals_exact_search(haystack, tmp_path):
    index, _, _, query = haystack
    exact = make_store(tmp_path, VectorPlan.EXACT).open_index(index.name)
    try:
        assert ids(index.vector_search(query, ALL, 10)) == ids(exact.vector_search(query, ALL, 10))
    finally:
        exact.close()


# -- hybrid -----------------------------------------------------------------------------------


def statements_seen(monkeypatch) -> list[str]:
    seen: list[str] = []
    original = pymysql.cursors.Cursor.execute

    def execute(cursor, query, args=None):
        seen.append(query)
        return original(cursor, query, args)

    monkeypatch.setattr(pymysql.cursors.Cursor, "execute", execute)
    return seen


def test_hybrid_search_equals_both_searches(corpus_index):
    index, _ = corpus_index
    query = vector_for("swift-2")
    hybrid = index.hybrid_search(query, "view model data", ALL, 5)
    vector = index.vector_search(query, ALL, 5)
    bm25 = index.bm25_search("view model data", ALL, 5)
    assert ids(hybrid.vector) == ids(vector)
    assert [h.score for h in hybrid.vector] == pytest.approx([h.score for h in vector], abs=1e-9)
    assert ids(hybrid.bm25) == ids(bm25)
    assert [h.score for h in hybrid.bm25] == pytest.approx([h.score for h in bm25], abs=1e-9)


def test_hybrid_search_is_one_statement(corpus_index, monkeypatch):
    index, _ = corpus_index
    seen = statements_seen(monkeypatch)
    index.hybrid_search(vector_for("q"), "view model", ALL, 5)
    searches = [s for s in seen if "VEC_COSINE_DISTANCE" in s or "_postings" in s]
    assert len(searches) == 1
    assert "ROW_NUMBER()" in searches[0] and "VEC_COSINE_DISTANCE" in searches[0]


def test_hybrid_search_with_a_selective_filter_still_returns_k_vector_hits(haystack):
    index, _, _, query = haystack
    rare = SearchFilter(domains=("rare",), include_user_codebase=False)
    hybrid = index.hybrid_search(query, "content", rare, 5)
    assert ids(hybrid.vector) == ids(index.vector_search(query, rare, 5))
    assert len(hybrid.vector) == 5 and len(hybrid.bm25) == 5


def test_hybrid_search_without_query_terms_is_vector_only(corpus_index):
    index, _ = corpus_index
    hybrid = index.hybrid_search(vector_for("q"), "?! --", ALL, 3)
    assert hybrid.bm25 == []
    assert ids(hybrid.vector) == ids(index.vector_search(vector_for("q"), ALL, 3))
