"""Which fusion rule an index should use by default, decided from its own chunks.

The adaptive rule (query/retrieval/adaptive.py) reads one query's BM25 score shape; it cannot
know that on some indexes the keyword leg is usually right, where reciprocal rank fusion
serves better, while on natural-language questions over code RRF costs 0.08 nDCG@10.
Calibration asks the index: pairs mined from its chunks (query/calibration/pairs.py)
are searched through both of the index's signals, the pair's stripped source scored as the
store would score it and ranked among the real hits, and both rules fuse the two lists. The
reciprocal rank of the pair's document in the top ten, averaged, measures each rule.

The pairs decide when they are sure: RRF when its gain over the adaptive rule has a
one-sided 95 % bootstrap lower bound of at least MIN_GAIN, the adaptive rule when the upper
bound is at most -MIN_GAIN, over at least MIN_PAIRS pairs. Between the two the pairs cannot
tell, and the adaptive rule stays (query/calibration/decision.py says why the index's shape
no longer decides). Whether the adaptive rule's identifier floor applies is decided too: it stays
unless the pairs that name an identifier say surely that it costs (`choose_floor`). The usage
floor applies on an index that is mostly code (`choose_usage_floor`).
Measured on every dev set: docs/evaluation.md, *Fusion calibration*.
"""

from __future__ import annotations

import json
import statistics
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from chunkers.embedding_text import embedding_text
from chunkers.model import CODE_LANGUAGES
from core.embedding.cache import EmbeddingCache, embed_with_cache
from core.embedding.models import canonical_model_id
from core.progress import Progress
from core.store.contract import Hit, IndexStore
from core.store.filters import SearchFilter
from query.calibration.decision import (
    DEFAULT_RULE,
    LOOK,
    MIN_PAIRS,
    Shape,
    bounds,
    choose,
    choose_floor,
    choose_usage_floor,
    interim,
)
from query.calibration.pairs import Pair, document_of, mine_pairs, reveals
from query.calibration.shadow import SampleStatistics, cosines
from query.retrieval.expansion.words import declared_identifiers
from query.retrieval.fusion import fuse
from query.retrieval.retrieve import MIN_CANDIDATES
from query.retrieval.rules import CALIBRATED_RULES
from query.types import RankedList


class CalibrationError(ValueError):
    """The index cannot be calibrated with what was given (another embedding model)."""


RULES = CALIBRATED_RULES
# A record of an earlier version is calibrated again (`needs_calibration`): version 4's
# rules rank documents by their best chunk in each leg, and its fallback is the default rule
# whatever the index's shape, so earlier records compared other rules; version 5 says whether
# the usage floor applies.
VERSION = 5
# Chunks read to mine pairs from and to estimate term statistics.
SAMPLE_CHUNKS = 4000
# 500 pairs tell the rules apart wherever they differ by 0.02 or more (docs/evaluation.md);
# embedding their stripped texts is most of calibration's time.
MAX_PAIRS = 500
DEPTH = 10  # reciprocal rank counts the first ten documents, as nDCG@10 does
# An index whose chunk count moved by this share since its calibration is calibrated again.
MATERIAL_CHANGE = 0.25
# Indexes this small have too few pairs to tell the rules apart; they keep the default.
MIN_CHUNKS = 200
SOURCE = "\x00source"  # the stripped source's id among the real hits: no chunk id has NUL


@dataclass(frozen=True)
class Calibration:
    """What calibration found for one index; stored as JSON in the index's meta row."""

    rule: str
    chunks: int  # the index's size when calibrated
    pairs: int
    mrr: dict[str, float] = field(default_factory=dict)  # rule → mean reciprocal rank@10
    gain: float = 0.0  # mean RRF minus adaptive over the pairs
    gain_low: float = 0.0  # its one-sided 95 % bootstrap lower bound
    sources: dict[str, int] = field(default_factory=dict)  # pairs per kind
    seconds: float = 0.0
    at: str = ""
    reason: str = ""
    version: int = VERSION
    floor: bool = (
        True  # the adaptive rule's identifier floor applies (query.retrieval.rules.auto_floor)
    )
    gain_high: float = 0.0  # the one-sided 95 % upper bound of `gain`
    decided_by: str = "default"  # "pairs" or "default"
    floor_pairs: int = 0  # pairs naming an identifier, which decide the floor
    floor_gain: float = 0.0  # mean reciprocal rank the floor adds on them
    chunks_per_document: float = 0.0
    prose_share: float = 0.0
    usage_floor: bool = False  # query.retrieval.rules.auto_usage_floor

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str | None) -> Calibration | None:
        """The record, or None when there is none or it is unreadable (a later version's):
        the index then fuses with the default rule."""
        if not text:
            return None
        try:
            data = json.loads(text)
            record = cls(**data)
        except (TypeError, ValueError):
            return None
        return record if record.rule in RULES else None


def needs_calibration(record: str | None, chunks: int) -> bool:
    """Never calibrated, or its chunk count moved by MATERIAL_CHANGE since."""
    if chunks < MIN_CHUNKS:
        return False
    found = Calibration.from_json(record)
    if found is None or found.version < VERSION:
        return True
    return abs(chunks - found.chunks) > MATERIAL_CHANGE * max(found.chunks, 1)


def reciprocal_rank(order: Sequence[str], pair: Pair, documents: Mapping[str, str]) -> float:
    """1 / rank of the pair's document among the first DEPTH documents of `order`
    (`documents`: chunk id → doc_id)."""
    seen: list[str] = []
    for chunk_id in order:
        document = pair.doc_id if chunk_id == SOURCE else documents.get(chunk_id, chunk_id)
        if document in seen:
            continue
        seen.append(document)
        if document == pair.doc_id:
            return 1.0 / len(seen)
        if len(seen) >= DEPTH:
            break
    return 0.0


def with_source(hits: Sequence[Hit], score: float, depth: int) -> list[tuple[str, Hit]]:
    """The real hits with the stripped source placed by its score, cut to `depth`."""
    placed = sorted([*hits, Hit(SOURCE, score)], key=lambda h: -h.score)[:depth]
    return [("index", hit) for hit in placed]


class Calibrator:
    """Calibrates one index with an embedder; `depth` is the candidates per signal and
    `rrf_k` the RRF constant the queries use (core/settings/)."""

    def __init__(
        self,
        index: IndexStore,
        embedder: Any,
        *,
        depth: int,
        rrf_k: int,
        log: Callable[[str], object] = print,
        cache: EmbeddingCache | None = None,
    ) -> None:
        self.index = index
        self.cache = cache
        self.embedder = embedder
        self.depth = depth
        self.rrf_k = rrf_k
        self.log = log
        self._rows: dict[str, dict[str, Any]] = {}
        self._documents: dict[str, str] = {}  # chunk id → its doc_id, for every row read

    def _fetch(self, chunk_ids: Sequence[str]) -> None:
        missing = [c for c in dict.fromkeys(chunk_ids) if c not in self._rows]
        if missing:
            found = self.index.fetch(missing)
            self._rows.update(found)
            self._documents.update((c, document_of(r)) for c, r in found.items())

    def run(self, chunks: int) -> Calibration:
        started = time.perf_counter()
        sample = self.sample()
        stats = SampleStatistics(
            (f"{r.get('context') or ''} {r.get('content') or ''}" for r in sample.values()),
            chunks,
            self.index.bm25_idf,
        )
        shape = self._shape(sample, chunks)
        pairs = mine_pairs(sample, MAX_PAIRS)
        sources = dict(sorted(Counter(p.source for p in pairs).items()))
        self.log(
            f"calibrate {self.index.name}: {len(pairs)} pairs mined from {len(sample)} of "
            f"{chunks} chunks ({', '.join(f'{n} {k}' for k, n in sources.items()) or 'none'})"
        )
        if len(pairs) < MIN_PAIRS:
            rule, _, decided_by, reason = choose({"adaptive": [], "rrf": []}, shape)
            return self._record(rule, chunks, pairs, {}, [], sources, started, reason,
                                decided_by=decided_by, shape=shape)  # fmt: skip
        ranks: dict[str, list[float]] = {rule: [] for rule in RULES}
        floor_on: list[float] = []
        floor_off: list[float] = []
        progress = Progress(len(pairs), f"calibrate {self.index.name}", log=self.log, unit="pairs")
        stopped = None
        # In looks of LOOK pairs: embedding the pairs' texts is nearly all of calibration's
        # time, and the first looks often settle what all the pairs would (`interim`).
        for start in range(0, len(pairs), LOOK):
            look = pairs[start : start + LOOK]
            query_vectors = np.asarray(self.embedder.embed_queries([p.query for p in look]))
            # Through the embedding cache: calibrating the index again (a material change, a
            # new calibration version) embeds only the pairs' texts not embedded before.
            text_vectors, _, _ = embed_with_cache(
                self.embedder, self.cache, [embedding_text(None, p.text, p.language) for p in look]
            )
            vector_scores = cosines(query_vectors, text_vectors)
            for pair, query_vector, vector_score in zip(
                look, query_vectors, vector_scores, strict=True
            ):
                self._score(pair, query_vector, float(vector_score), stats, ranks,
                            (floor_on, floor_off))  # fmt: skip
                progress.advance()
            gains = [r - a for a, r in zip(ranks["adaptive"], ranks["rrf"], strict=True)]
            floor_gains = [a - b for a, b in zip(floor_on, floor_off, strict=True)]
            stopped = interim(gains, len(pairs), floor_gains)
            if stopped is not None:
                break
        progress.done()
        scored = len(ranks["adaptive"])
        if stopped is not None:
            why = "settled them" if stopped == "sure" else "could not have decided otherwise"
            self.log(f"calibrate {self.index.name}: {scored} of {len(pairs)} pairs {why}")
        rule, gains, decided_by, reason = choose(ranks, shape)
        floor, floor_reason = choose_floor(floor_on, floor_off)
        floor_gain = statistics.fmean(floor_on) - statistics.fmean(floor_off) if floor_on else 0.0
        if stopped is not None:
            reason = f"{reason} (the first {scored} of {len(pairs)} pairs: {stopped})"
            sources = dict(sorted(Counter(p.source for p in pairs[:scored]).items()))
        return self._record(
            rule, chunks, pairs[:scored], ranks, gains, sources, started,
            f"{reason}; {floor_reason}", decided_by=decided_by, shape=shape, floor=floor,
            floor_pairs=len(floor_on), floor_gain=floor_gain,
        )  # fmt: skip

    def _score(
        self,
        pair: Pair,
        query_vector: np.ndarray,
        vector_score: float,
        stats: SampleStatistics,
        ranks: dict[str, list[float]],
        floor: tuple[list[float], list[float]],
    ) -> None:
        """Add the pair's reciprocal rank under each rule to `ranks`, and, when it names an
        identifier, the adaptive rule's with and without the floor to `floor`."""
        lists = self._lists(pair, query_vector, vector_score, stats)
        # Fused as the pipeline would fuse the question (the adaptive rule's floor, and its
        # keyword confidence counted over documents).
        names = bool(declared_identifiers(pair.query, self._declared))
        documents = {
            ("index", hit.chunk_id): pair.doc_id if hit.chunk_id == SOURCE
            else self._documents.get(hit.chunk_id, hit.chunk_id)
            for ranked in lists for _, hit in ranked.hits
        }  # fmt: skip
        for rule in RULES:
            fused = fuse(
                lists, method=rule, k=self.rrf_k, names_identifier=names, documents=documents
            )
            ranks[rule].append(reciprocal_rank([c.chunk_id for c in fused], pair, self._documents))
        if names:
            floor[0].append(ranks["adaptive"][-1])
            fused = fuse(lists, method="adaptive", k=self.rrf_k, documents=documents)
            floor[1].append(reciprocal_rank([c.chunk_id for c in fused], pair, self._documents))

    def sample(self) -> dict[str, dict[str, Any]]:
        """Up to SAMPLE_CHUNKS of the index's rows, by chunk id."""
        sample_ids = self.index.sample_chunk_ids(SAMPLE_CHUNKS)
        self._fetch(sample_ids)
        return {c: self._rows[c] for c in sample_ids if c in self._rows}

    def _shape(self, sample: Mapping[str, Mapping[str, Any]], chunks: int) -> Shape:
        documents = int(self.index.stats().get("documents") or 0)
        prose = sum(1 for r in sample.values() if r.get("language") not in CODE_LANGUAGES)
        return Shape(
            chunks_per_document=chunks / documents if documents else 0.0,
            prose_share=prose / len(sample) if sample else 0.0,
        )

    def _declared(self, names: Sequence[str]) -> set[str]:
        """Which of `names` the index declares (as the pipeline asks, `QuestionReading.declared`)."""
        return {str(row["name"]) for row in self.index.definitions_named(list(names))}

    def _lists(
        self, pair: Pair, query_vector: np.ndarray, vector_score: float, stats: SampleStatistics
    ) -> list[RankedList]:
        """Both signals' hits for the pair's query without the chunks that reveal it, the
        stripped source placed among them by its own scores."""
        margin = self.depth + 40  # room for the chunks left out
        everything = SearchFilter()
        keyword = self.index.bm25_search(pair.query, everything, margin)
        vector = self.index.vector_search(query_vector, everything, margin)
        self._fetch([h.chunk_id for h in [*keyword, *vector]])

        def kept(hits: list[Hit]) -> list[Hit]:
            return [
                h
                for h in hits
                if h.chunk_id != pair.chunk_id and not reveals(pair, self._rows.get(h.chunk_id, {}))
            ]

        return [
            RankedList("bm25", 0, with_source(kept(keyword), stats.bm25(pair.query, pair.text), self.depth)),
            RankedList("vector", 0, with_source(kept(vector), vector_score, self.depth)),
        ]  # fmt: skip

    def _record(
        self,
        rule: str,
        chunks: int,
        pairs: Sequence[Pair],
        ranks: Mapping[str, list[float]],
        gains: Sequence[float],
        sources: dict[str, int],
        started: float,
        reason: str,
        *,
        decided_by: str,
        shape: Shape,
        floor: bool = True,
        floor_pairs: int = 0,
        floor_gain: float = 0.0,
    ) -> Calibration:
        low, high = bounds(gains) if gains else (0.0, 0.0)
        usage_floor, usage_reason = choose_usage_floor(shape)
        return Calibration(
            rule=rule,
            chunks=chunks,
            pairs=len(pairs),
            mrr={r: round(statistics.fmean(v), 4) for r, v in ranks.items() if v},
            gain=round(statistics.fmean(gains), 4) if gains else 0.0,
            gain_low=round(low, 4),
            gain_high=round(high, 4),
            sources=sources,
            seconds=round(time.perf_counter() - started, 1),
            at=datetime.now(UTC).isoformat(timespec="seconds"),
            reason=f"{reason}; {usage_reason}",
            floor=floor,
            decided_by=decided_by,
            floor_pairs=floor_pairs,
            floor_gain=round(floor_gain, 4),
            chunks_per_document=round(shape.chunks_per_document, 2),
            prose_share=round(shape.prose_share, 3),
            usage_floor=usage_floor,
        )


def calibrate_index(
    index: IndexStore,
    embedder: Any,
    *,
    depth: int,
    rrf_k: int,
    log: Callable[[str], object] = print,
    record: bool = True,
    cache_file: Path | None = None,
) -> Calibration:
    """Calibrate `index` and (unless `record` is False) store the result in it; the pairs'
    texts are embedded through the embedding cache at `cache_file`, if given."""
    chunks = int(index.stats().get("chunks") or 0)
    model = getattr(embedder, "model_id", None)
    if index.model_id is None or chunks < MIN_CHUNKS:
        why = "it holds no vectors" if index.model_id is None else f"{chunks} chunks"
        result = Calibration(
            DEFAULT_RULE, chunks, 0, at=datetime.now(UTC).isoformat(timespec="seconds"),
            reason=f"not calibrated: {why}; the default rule stays, with no usage floor",
        )  # fmt: skip
        log(f"calibrate {index.name}: {result.reason}")
        return result
    if model is not None and canonical_model_id(str(model)) != canonical_model_id(index.model_id):
        raise CalibrationError(
            f"index {index.name!r} was embedded with {index.model_id!r}, not {model!r}: "
            "calibrate it with the model it was built with"
        )
    # As deep as a query searches each signal (query/retrieval/retrieve.py).
    depth = max(depth, MIN_CANDIDATES)
    with ExitStack() as stack:
        cache = stack.enter_context(EmbeddingCache(cache_file)) if cache_file else None
        calibrator = Calibrator(index, embedder, depth=depth, rrf_k=rrf_k, log=log, cache=cache)
        result = calibrator.run(chunks)
    if record:
        index.record_fusion_calibration(result.to_json())
    log(
        f"calibrate {index.name}: fusion {result.rule}, identifier floor "
        f"{'on' if result.floor else 'off'}, usage floor {'on' if result.usage_floor else 'off'} "
        f"({result.reason}; {result.seconds}s)"
    )
    return result
