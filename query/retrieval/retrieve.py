"""Hybrid search over one or more indexes: vector and BM25 per query variant, then fusion.

Each signal returns its own top N (N = settings.candidates_per_signal, at least
MIN_CANDIDATES, never tied to top-k, so asking for fewer results never changes the ranking)
under one SearchFilter. A signal that cannot run for an index is skipped for that index with
a "degraded:" note, and the other signal carries on: no vectors, an index built with another
embedding model than the query embedder (queries are never embedded with a different model),
no full-text rows, a query embedder that failed, or a search that raised.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from core.store.contract import Hit, IndexStore
from core.store.filters import SearchFilter
from core.versions import version_int
from query.retrieval.adaptive import adaptive_weights, keyword_confidence
from query.retrieval.boosts import adjust
from query.retrieval.dedupe import dedupe_by_key
from query.retrieval.engine import Engine
from query.retrieval.fusion import fuse, hit_documents, merge_indexes
from query.retrieval.plan import MODE_SIGNALS, plan_signals
from query.retrieval.reading import QuestionReading
from query.retrieval.trace import Trace
from query.types import Candidate, QueryRequest, RankedList

MIN_CANDIDATES = 50
FEEDBACK_DOCS = 5  # top BM25 hits handed to query expansion as pseudo-relevance feedback
# Which signals each --mode runs.


def domains_for(domain: str | None) -> tuple[str, ...] | None:
    """The domain rule, in this one place: `--domain D` admits chunks of domain D and of
    "general" (language-neutral material: concepts, WWDC talks, chat) — a general chunk is
    as likely to answer an iOS question as an iOS one. `--domain general` admits general
    only; no --domain admits every domain. User code passes whatever its domain (unless
    --no-user-codebase), per SearchFilter."""
    if domain is None:
        return None
    return (domain,) if domain == "general" else (domain, "general")


def search_filter(request: QueryRequest) -> SearchFilter:
    return SearchFilter(
        domains=domains_for(request.domain),
        include_user_codebase=request.user_codebase,
        ios_version_int=version_int(request.ios_version),
        include_deprecated=request.include_deprecated,
        fresh_within_days=request.fresh_within_days,
    )


class Retriever:
    """Hybrid retrieval for one request; hits are cached per (index, signal, text), so the
    feedback run, the variants and CoRAG's follow-ups never search the same text twice."""

    def __init__(
        self, engine: Engine, request: QueryRequest, indexes: Sequence[str], trace: Trace
    ) -> None:
        self.engine = engine
        self.request = request
        self.indexes = list(indexes)
        self.trace = trace
        self.filt = search_filter(request)
        self.per_signal = max(engine.settings.candidates_per_signal, MIN_CANDIDATES)
        self._hits: dict[tuple[str, str, str], list[Hit]] = {}
        self._vectors: dict[str, np.ndarray] = {}
        self._light: dict[tuple[str, str], dict[str, Any]] = {}  # light rows read before fusion
        self.plan = plan_signals(engine, MODE_SIGNALS[request.mode], self.indexes, trace)
        self.reading = QuestionReading(engine, request, self.searched, trace)

    @property
    def has_bm25(self) -> bool:
        return any("bm25" in signals for signals in self.plan.values())

    # Planning: which signal may run on which index

    # Searching

    def ranked_lists(self, variants: Sequence[str]) -> list[RankedList]:
        routed = self.engine.settings.expansion_route == "bm25"
        if any("vector" in s for s in self.plan.values()):
            with self.trace.stage("embed"):
                self._embed(variants[:1] if routed else variants)
        lists: list[RankedList] = []
        for name in self.indexes:
            if not self.plan[name]:
                continue
            with self.engine.checkout(name) as index:
                for number, text in enumerate(variants):
                    signals = ("bm25",) if routed and number > 0 else ("vector", "bm25")
                    if len(signals) == 2:
                        self._search_both(index, name, text)
                    for signal in signals:
                        hits = self._search(index, name, signal, text)
                        if hits is not None:
                            lists.append(RankedList.of_index(signal, name, number, hits))
        return merge_indexes(lists)

    def _embed(self, variants: Sequence[str]) -> None:
        missing = [t for t in dict.fromkeys(variants) if t not in self._vectors]
        if not missing:
            return
        try:
            matrix = self.engine.embed_queries(missing)
        except Exception as exc:  # an embedding endpoint down degrades to BM25
            self.trace.degrade(f"vector search skipped: embedding the query failed: {exc}")
            for signals in self.plan.values():
                signals.discard("vector")
            return
        self._vectors.update(zip(missing, matrix, strict=True))

    def _search_both(self, index: IndexStore, name: str, text: str) -> None:
        """Both signals in one round trip, for a store that offers `hybrid_search` (TiDB); it
        fills the same per-signal cache `_search` reads, so the fusion is unchanged. A
        failure leaves the cache empty and the two searches run one by one."""
        hybrid = getattr(index, "hybrid_search", None)
        keys = [(name, signal, text) for signal in ("vector", "bm25")]
        if (
            hybrid is None
            or not {"vector", "bm25"} <= self.plan[name]
            or text not in self._vectors
            or any(key in self._hits for key in keys)
        ):
            return
        try:
            # Timed as vector search: the statement's cost is dominated by the vector side.
            with self.trace.stage("vector"):
                found = hybrid(self._vectors[text], text, self.filt, self.per_signal)
        except Exception as exc:
            self.trace.note(f"one-round-trip search failed on index {name!r}: {exc}")
            return
        self._hits[keys[0]], self._hits[keys[1]] = list(found.vector), list(found.bm25)
        self._took(index, name, "vector_path", "keyword_path")

    def _search(self, index: IndexStore, name: str, signal: str, text: str) -> list[Hit] | None:
        if signal not in self.plan[name]:
            return None
        key = (name, signal, text)
        if key in self._hits:
            return self._hits[key]
        if signal == "vector" and text not in self._vectors:
            return None
        try:
            with self.trace.stage(signal):
                if signal == "vector":
                    hits = index.vector_search(self._vectors[text], self.filt, self.per_signal)
                else:
                    hits = index.bm25_search(text, self.filt, self.per_signal)
        except Exception as exc:
            label = "vector search" if signal == "vector" else "BM25"
            self.trace.degrade(f"{label} failed on index {name!r}: {exc}")
            self.plan[name].discard(signal)
            return None
        self._hits[key] = list(hits)
        self._took(index, name, "vector_path" if signal == "vector" else "keyword_path")
        return self._hits[key]

    def _took(self, index: IndexStore, name: str, *kinds: str) -> None:
        """Record the paths the search just run on `index` took, where the store says."""
        report = getattr(index, "search_paths", None)
        paths = report() if report is not None else {}
        for kind in kinds:
            if kind in paths:
                self.trace.took(kind, name, paths[kind])

    # Whole retrieval

    def retrieve(self, variants: Sequence[str], *, whole: int | None = None) -> list[Candidate]:
        """Fused, boosted, deduplicated candidates for the query variants. Fusion reads no
        text: duplicates are found by the text_keys the hits carry (`dedupe_by_key`), and
        the FUSION_COLUMNS of every candidate (`fetch_light`) are read only when a boost or
        the demotion applies or a hit came without its key. The whole rows are fetched for
        the first `whole` candidates (None: all), the ones the caller shows or reads the
        text of; the rest keep a light row or none, which `fetch` completes. Rankings and
        scores are the same as reading every whole row: only what is read differs."""
        lists = self.ranked_lists(variants)
        pending = self.without_vectors(lists)
        with self.trace.stage("fuse"):
            settings = self.engine.settings
            weights = {
                "vector": settings.fusion_vector_weight,
                "bm25": 1.0 - settings.fusion_vector_weight,
            }
            reading = self.reading
            method = reading.fusion_method()
            identifiers = reading.definitions_boosted()
            documents = self.documents(lists)
            candidates = fuse(
                lists,
                method=method,
                k=settings.rrf_k,
                weights=weights,
                expansion_share=settings.fusion_expansion_share,
                names_identifier=method == "adaptive" and reading.names_identifier(),
                asks_usage=method == "adaptive" and reading.asks_usage(),
                pending=pending,
                documents=documents,
            )
            if self.trace.fusion is None:
                self.trace.fusion = self._fusion_report(lists, weights, method, documents)
            self._reuse_light_rows(candidates)
            boosted = bool(identifiers or self.request.frameworks)
            demoted = self.filt.ios_version_int is not None
            # Rows are read when a boost or the demotion looks at them, or when a search
            # could not say a hit's text_key; otherwise fusion reads no row at all.
            if boosted or demoted or any(c.text_key is None for c in candidates):
                candidates = self.fetch_light(candidates)
            candidates = adjust(
                candidates,
                frameworks=self.request.frameworks,
                ios_version_int=self.filt.ios_version_int,
                identifiers=identifiers,
            )
            candidates, _ = dedupe_by_key(candidates, self.fetch)
            candidates = self.fetch_head(candidates, len(candidates) if whole is None else whole)
        return candidates

    def without_vectors(self, lists: Sequence[RankedList]) -> set[tuple[str, str]]:
        """The BM25 candidates that have no vector yet, in the indexes the vector leg
        searched while some of their chunks wait for one (`Plan.embedding`)."""
        if not any(ranked.signal == "vector" for ranked in lists):
            return set()
        wanted: dict[str, dict[str, None]] = {}
        for ranked in lists:
            if ranked.signal == "bm25":
                for name, hit in ranked.hits:
                    if "vector" in self.plan.get(name, ()) and name in self.plan.embedding:
                        wanted.setdefault(name, {})[hit.chunk_id] = None
        pending: set[tuple[str, str]] = set()
        for name, ids in wanted.items():
            with self.engine.checkout(name) as index:
                pending.update((name, c) for c in index.without_vectors(list(ids)))
        return pending

    def searched(self) -> list[str]:
        return [name for name in self.indexes if self.plan.get(name)]

    def fetch_head(self, candidates: list[Candidate], n: int) -> list[Candidate]:
        """`candidates` with the whole rows of the first n: a chunk deleted since the search
        is dropped and the next one fetched in its place."""
        done: list[Candidate] = []
        rest = candidates
        while len(done) < n and rest:
            wanted = n - len(done)
            done += self.fetch(rest[:wanted])
            rest = rest[wanted:]
        return done + rest

    def documents(self, lists: Sequence[RankedList]) -> dict[tuple[str, str], str]:
        """The doc_ids of the hits that do not carry their own (a store whose searches do not
        return them): read from their light rows, one round trip per index, and kept for the
        candidates, which would read those rows after fusion anyway (such a store's hits
        carry no text_key either). The embedded store's hits carry both: nothing is read."""
        wanted: dict[str, dict[str, None]] = {}
        for ranked in lists:
            for name, hit in ranked.hits:
                if hit.doc_id is None and (name, hit.chunk_id) not in self._light:
                    wanted.setdefault(name, {})[hit.chunk_id] = None
        for name, ids in wanted.items():
            with self.engine.checkout(name) as index:
                fetched = index.fetch_light(list(ids))
            self._light.update(
                {(name, c): normalise_row(row, ("framework_tags",)) for c, row in fetched.items()}
            )
        documents: dict[tuple[str, str], str] = {}
        for ranked in lists:
            for name, hit in ranked.hits:
                doc = self._light.get((name, hit.chunk_id), {}).get("doc_id")
                if hit.doc_id is None and doc:
                    documents[(name, hit.chunk_id)] = str(doc)
        return documents

    def _reuse_light_rows(self, candidates: Sequence[Candidate]) -> None:
        for cand in candidates:
            if not cand.row and cand.key in self._light:
                cand.row = self._light[cand.key]
                if cand.text_key is None:
                    cand.text_key = cand.row.get("text_key")

    def _fusion_report(
        self,
        lists: Sequence[RankedList],
        weights: dict[str, float],
        method: str,
        documents: Mapping[tuple[str, str], str] | None = None,
    ) -> dict[str, Any]:
        """What an agent needs to read the scores: the method and the weights it used (and,
        for `auto`, whether the indexes' calibration chose it)."""
        settings = self.engine.settings
        report: dict[str, Any] = {"method": method}
        reading = self.reading
        if self.request.fusion == "auto" and reading.auto is not None:
            report["chosen_by"] = "calibration" if reading.auto[1] else "default"
        identifiers = reading.definitions_boosted()
        if method == "adaptive":
            known = hit_documents(lists, documents)
            weights = adaptive_weights(
                lists, reading.names_identifier(), known, reading.asks_usage()
            )
            confidence = keyword_confidence(lists, known)
            report["keyword_confidence"] = None if confidence is None else round(confidence, 4)
            if reading.asks_usage():
                report["usage_floor"] = True  # query.retrieval.adaptive.USAGE_KEYWORD_FLOOR
        if method in ("adaptive", "weighted"):
            report["weights"] = {k: round(v, 4) for k, v in weights.items()}
        else:
            report["rrf_k"] = settings.rrf_k
        if identifiers:
            # Chunks defining these are boosted (query.retrieval.boosts.DEFINITION_BOOST).
            report["definitions_of"] = identifiers
        if len({r.variant for r in lists}) > 1:
            report["expansion_share"] = settings.fusion_expansion_share
            report["expansion_route"] = settings.expansion_route
        return report

    def feedback_texts(self, query: str, n: int = FEEDBACK_DOCS) -> list[str]:
        """Contents of the top BM25 hits of the original query, for query expansion."""
        lists = []
        with self.trace.stage("bm25"):
            for name in self.indexes:
                if "bm25" not in self.plan[name]:
                    continue
                with self.engine.checkout(name) as index:
                    hits = self._search(index, name, "bm25", query)
                if hits:
                    lists.append(RankedList.of_index("bm25", name, 0, hits))
        top = fuse(merge_indexes(lists), k=self.engine.settings.rrf_k)[:n]
        return [str(c.row.get("content") or "") for c in self.fetch(top)]

    def fetch(self, candidates: list[Candidate]) -> list[Candidate]:
        """Attach the whole stored rows to candidates without one (no row, or fusion's light
        row); a chunk deleted since the search is dropped."""
        return self._attach(candidates, whole_row, lambda index, ids: index.fetch(ids), LIST_FIELDS)

    def fetch_light(self, candidates: list[Candidate]) -> list[Candidate]:
        """Attach fusion's light rows (FUSION_COLUMNS) to candidates without a row; a chunk
        deleted since the search is dropped."""
        return self._attach(
            candidates, bool, lambda index, ids: index.fetch_light(ids), ("framework_tags",)
        )

    def _attach(
        self,
        candidates: list[Candidate],
        has: Callable[[dict[str, Any]], bool],
        read: Callable[[IndexStore, list[str]], dict[str, dict[str, Any]]],
        lists: Sequence[str],
    ) -> list[Candidate]:
        by_index: dict[str, list[str]] = {}
        for cand in candidates:
            if not has(cand.row):
                by_index.setdefault(cand.index, []).append(cand.chunk_id)
        if not by_index:
            return candidates
        rows: dict[tuple[str, str], dict[str, Any]] = {}
        for name, ids in by_index.items():
            with self.engine.checkout(name) as index:
                fetched = read(index, ids)
            rows.update({(name, cid): normalise_row(row, lists) for cid, row in fetched.items()})
        kept = []
        for cand in candidates:
            if not has(cand.row):
                cand.row = rows.get(cand.key, {})
                if cand.text_key is None:
                    cand.text_key = cand.row.get("text_key")
            if cand.row:
                kept.append(cand)
        return kept


def whole_row(row: dict[str, Any]) -> bool:
    """The row is the whole stored chunk (`fetch`), not fusion's light row, which has no text."""
    return "content" in row


LIST_FIELDS = ("framework_tags", "imports", "attributes")


def normalise_row(row: dict[str, Any], lists: Sequence[str] = LIST_FIELDS) -> dict[str, Any]:
    """Stores may hand lists as JSON text and booleans as integers; the query side sees
    Python lists and bools. Rows already in that form (both stores' `fetch`) pass as they are.
    `lists`: the list fields the row has (a light row has only framework_tags)."""
    out = row
    for key in lists:
        value = row.get(key)
        if isinstance(value, list):
            continue
        if out is row:
            out = dict(row)
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                value = [value]
        out[key] = list(value or [])
    if not isinstance(row.get("deprecated"), bool):
        if out is row:
            out = dict(row)
        out["deprecated"] = bool(row.get("deprecated"))
    return out
