"""The searches of one TiDB index: vector (an exact scan, or over-fetched through the HNSW
index), BM25 (native full-text search or the postings tables) and both in one statement.
The pieces that need no server (the over-fetch plan, the query vector's literal) are
search.py's.

The paths, as reported (`stats`, `search_paths`): keyword `native` (TiDB's full-text search)
or `sql-postings` (BM25 in SQL over the postings table); vector `hnsw` (over-fetched through
the HNSW index) or `exact` (a filtered scan, also where the over-fetch found too few)."""

from __future__ import annotations

from typing import Any

import numpy as np

from core.store.bm25 import K1, B
from core.store.contract import Hit, HybridHits, StoreError
from core.store.filters import SearchFilter
from core.store.tidb.bm25 import query_terms
from core.store.tidb.handle import IndexHandle
from core.store.tidb.rows import ranked, vector_hits
from core.store.tidb.search import VectorPlan, fetch_sizes, vector_literal
from core.store.tidb.sql import Tables, fragment, placeholders, statements

NATIVE, SQL_POSTINGS = "native", "sql-postings"
HNSW, EXACT = "hnsw", "exact"


def keyword_path(bm25_mode: str) -> str:
    """The keyword path of an index whose recorded BM25 mode is `bm25_mode`."""
    return NATIVE if bm25_mode == "native" else SQL_POSTINGS


class IndexSearch(IndexHandle):
    """The `IndexStore` searches and `HybridSearch` of a TiDB index."""

    def _vector_plan(self, vector_index: str) -> VectorPlan:
        plan = self.store.vector_plan
        if plan is VectorPlan.AUTO:
            return VectorPlan.ANN if vector_index == "hnsw" else VectorPlan.EXACT
        return plan

    def search_paths(self) -> dict[str, str]:
        """The paths the last searches of this handle took (`keyword_path`, `vector_path`),
        each once that search has run."""
        return dict(self._paths)

    def _vector_params(
        self, query: np.ndarray, filt: SearchFilter, k: int, dim: int
    ) -> dict[str, Any]:
        try:
            literal = vector_literal(query, dim)
        except ValueError as exc:
            raise StoreError(f"index {self.name!r}: {exc}") from None
        return {"query": literal, "k": k, **filt.sql_params()}

    def vector_search(self, query: np.ndarray, filt: SearchFilter, k: int) -> list[Hit]:
        """Cosine top-k among the chunks `filt` admits. With an HNSW index: over-fetch through
        the index, filter, widen while fewer than k survive, then an exact filtered scan."""
        meta = self._meta()
        # An all-zero query has no cosine distance to anything (NULL in TiDB).
        if meta[1] is None or k <= 0 or not np.any(query):
            return []
        params = self._vector_params(query, filt, k, meta[1])
        filt_sql = filter_sql(self.tables, filt)
        if self._vector_plan(meta[3]) is VectorPlan.ANN:
            ann = self._sql("vector_ann_candidates", filter=filt_sql)
            total = meta[5]  # chunks in the BM25 corpus = chunks with vectors
            for fetch in fetch_sizes(k, total):
                rows = self._rows("vector search", ann, {**params, "fetch": fetch})
                if len(rows) >= k or fetch >= total:
                    self._paths["vector_path"] = HNSW
                    return vector_hits(rows)
        exact = self._sql("vector_exact_candidates", filter=filt_sql)
        hits = vector_hits(self._rows("vector search", exact, params))
        self._paths["vector_path"] = EXACT
        return hits

    def bm25_search(self, text: str, filt: SearchFilter, k: int) -> list[Hit]:
        """BM25 (k1 1.2, b 0.75) over the analysed terms, OR-ed, filtered like `filt.admits`."""
        terms = query_terms(text)
        if not terms or k <= 0:
            return []
        mode = self._meta()[4]
        if mode == "native":
            sql = self._sql("bm25_native_candidates", filter=filter_sql(self.tables, filt))
            params = {"text": " ".join(terms), "k": k, **filt.sql_params()}
        else:
            sql, params = self._bm25_sql(terms, filt)
            params.update(k=k, **filt.sql_params())
        hits = [Hit(cid, float(score)) for cid, score in self._rows("BM25 search", sql, params)]
        self._paths["keyword_path"] = keyword_path(mode)
        return hits

    def _bm25_sql(self, terms: list[str], filt: SearchFilter) -> tuple[str, dict[str, Any]]:
        marks, names = placeholders("t", len(terms))
        reads = "\nUNION ALL\n".join(
            fragment("bm25_term_postings", self.tables, term=f"%({n})s") for n in names
        )
        sql = self._sql(
            "bm25_candidates",
            terms=marks,
            term_postings=reads,
            filter=filter_sql(self.tables, filt),
        )
        per_term = self.store.settings.tidb_bm25_postings_per_term
        params = {"k1": K1, "b": B, "per_term": per_term}
        return sql, {**params, **{n: terms[i] for n, i in names.items()}}

    def hybrid_search(self, query: np.ndarray, text: str, filt: SearchFilter, k: int) -> HybridHits:
        """Vector and BM25 candidates in one statement (hybrid_search.sql).
        Falls back to the two searches where one statement cannot do it: no query terms,
        native full-text search (which allows no outer joins), an all-zero query vector, or
        an over-fetch that left fewer than k vector hits."""
        meta = self._meta()
        terms = query_terms(text)
        if meta[1] is None or k <= 0 or not terms or meta[4] == "native" or not np.any(query):
            return self._separately(query, text, filt, k)
        params = self._vector_params(query, filt, k, meta[1])
        bm25_sql, bm25_params = self._bm25_sql(terms, filt)
        params.update(bm25_params)
        filt_sql = filter_sql(self.tables, filt)
        ann = self._vector_plan(meta[3]) is VectorPlan.ANN
        sizes = fetch_sizes(k, meta[5]) if ann else []
        if ann and sizes:
            vector_sql = self._sql("vector_ann_candidates", filter=filt_sql)
            params["fetch"] = sizes[0]
        else:
            vector_sql = self._sql("vector_exact_candidates", filter=filt_sql)
        sql = self._sql(
            "hybrid_search",
            vector_candidates=_inline(vector_sql),
            bm25_candidates=_inline(bm25_sql),
        )
        rows = self._rows("hybrid search", sql, params)
        vector = ranked(rows, rank=1, score=2)
        bm25 = ranked(rows, rank=3, score=4)
        self._paths.update(keyword_path=SQL_POSTINGS, vector_path=HNSW if sizes else EXACT)
        if ann and sizes and len(vector) < k and sizes[0] < meta[5]:
            vector = self.vector_search(query, filt, k)
        return HybridHits(vector, bm25)

    def _separately(self, query: np.ndarray, text: str, filt: SearchFilter, k: int) -> HybridHits:
        return HybridHits(self.vector_search(query, filt, k), self.bm25_search(text, filt, k))


def filter_sql(tables: Tables, filt: SearchFilter) -> str:
    """The filter predicate over the row alias `c`; the frameworks rule only when `filt` has
    one, so TiDB sees a plain JSON_OVERLAPS it can serve from the multi-valued index."""
    predicate = fragment("filter_predicate", tables)
    if filt.frameworks_any is None:
        return predicate
    return predicate + "\n" + fragment("filter_frameworks", tables)


def _inline(sql: str) -> str:
    """A statement as a derived table: without comments and the final ';'."""
    (only,) = statements(sql)
    return only
