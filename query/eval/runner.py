"""Evaluation runs: each mode's queries asked through the real query pipeline
(`answer(make_request(...))`) and scored against the judgements."""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.progress import Progress
from core.settings import Settings, SettingsError
from core.store.contract import Hit
from core.store.modes import LONG_LIVED
from core.store.open import open_store
from query.calibration.after_ingest import calibrate_if_changed
from query.eval.beir import BeirData, DatasetError, load_beir
from query.eval.index import (
    Documents,
    as_built,
    build_in_store,
    calibration_report,
    index_name,
)
from query.eval.metrics import mean_scores, relevant, score_query
from query.retrieval.engine import Engine
from query.retrieval.fusion import rrf_scores
from query.retrieval.pipeline import UsageError, answer, make_request
from query.types import DEFAULT_FUSION, RankedList

BASE_MODES = ("bm25", "vector", "hybrid", "hybrid+rerank", "hybrid+corag", "hybrid+corag-rrf")
DEFAULT_MODES = "bm25,vector,hybrid,hybrid+rerank,hybrid+corag"
NOEXPAND = "-noexpand"
TOP_K = 100
METRIC_KEYS = ("ndcg@10", "recall@10", "recall@100", "mrr@10")


@dataclass
class ModeResult:
    mode: str
    scores: dict[str, float] = field(default_factory=dict)
    latency_ms: float = 0.0
    p95_ms: float = 0.0
    queries: int = 0
    unavailable: str | None = None
    expansion: Counter = field(default_factory=Counter)  # method -> queries
    notes: Counter = field(default_factory=Counter)  # note -> queries
    stages_ms: dict[str, float] = field(default_factory=dict)  # mean per query
    corag_hops: float | None = None
    # Multi-hop sets: all@10 / all@20 over the questions needing 2, and 3 or more, documents.
    by_needed: dict[str, dict[str, float]] = field(default_factory=dict)
    # Sets whose questions carry labels (a kind, a style): the scores of each label's questions.
    by_label: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        if self.unavailable:
            return {"unavailable": self.unavailable}
        out: dict[str, Any] = {k: round(v, 4) for k, v in self.scores.items()}
        out["latency_ms"] = round(self.latency_ms, 1)
        out["p95_ms"] = round(self.p95_ms, 1)
        out["queries"] = self.queries
        out["expansion"] = dict(self.expansion)
        out["stages_ms"] = {k: round(v, 1) for k, v in self.stages_ms.items() if v}
        if self.corag_hops is not None:
            out["corag_hops"] = round(self.corag_hops, 2)
        if self.by_needed:
            out["by_documents_needed"] = {
                group: {k: round(v, 4) for k, v in scores.items()}
                for group, scores in self.by_needed.items()
            }
        if self.by_label:
            out["by_label"] = {
                name: {
                    value: {k: round(v, 4) for k, v in scores.items()}
                    for value, scores in groups.items()
                }
                for name, groups in self.by_label.items()
            }
        out["notes"] = dict(self.notes.most_common(5))
        return out


def coverage_by_documents_needed(
    query_ids: list[str],
    qrels: dict[str, dict[str, int]],
    per_query: list[dict[str, float]],
) -> dict[str, dict[str, float]]:
    """all@10 and all@20 (every relevant document found) over the questions that need 2, and
    3 or more, documents; empty when no question needs more than one (single-hop sets)."""
    groups: dict[str, list[dict[str, float]]] = {}
    for qid, scores in zip(query_ids, per_query, strict=True):
        needed = len(relevant(qrels[qid]))
        if needed >= 2:
            groups.setdefault("2" if needed == 2 else "3+", []).append(scores)
    return {
        group: {
            "queries": float(len(rows)),
            "all@10": statistics.fmean(r["all@10"] for r in rows),
            "all@20": statistics.fmean(r["all@20"] for r in rows),
        }
        for group, rows in sorted(groups.items())
    }


# A label with more values than this names each question (an answer, an id), not a group.
MAX_LABEL_VALUES = 12


def scores_by_label(
    query_ids: list[str],
    labels: dict[str, dict[str, str]],
    per_query: list[dict[str, float]],
) -> dict[str, dict[str, dict[str, float]]]:
    """nDCG@10 and recall@10 over the questions of each value of each label the questions
    carry in their metadata (`kind`: where | usage), for labels with 2 to MAX_LABEL_VALUES
    values, some of them shared by several questions."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    names = {name for qid in query_ids for name in labels.get(qid, {})}
    for name in sorted(names):
        groups: dict[str, list[dict[str, float]]] = {}
        for qid, scores in zip(query_ids, per_query, strict=True):
            value = labels.get(qid, {}).get(name)
            if value is not None:
                groups.setdefault(value, []).append(scores)
        # A label naming each question apart (an answer) groups nothing.
        if 2 <= len(groups) <= MAX_LABEL_VALUES and len(groups) < sum(map(len, groups.values())):
            out[name] = {
                value: {
                    "queries": float(len(rows)),
                    "ndcg@10": statistics.fmean(r["ndcg@10"] for r in rows),
                    "recall@10": statistics.fmean(r["recall@10"] for r in rows),
                }
                for value, rows in sorted(groups.items())
            }
    return out


def parse_modes(text: str) -> list[str]:
    modes = [m.strip() for m in text.split(",") if m.strip()]
    for mode in modes:
        if mode.removesuffix(NOEXPAND) not in BASE_MODES:
            raise SettingsError(
                f"unknown mode {mode!r} (one of {', '.join(BASE_MODES)}, each optionally "
                f"with {NOEXPAND})"
            )
    if not modes:
        raise SettingsError("--modes names no mode")
    return list(dict.fromkeys(modes))


def request_fields(mode: str, fusion: str = DEFAULT_FUSION) -> dict[str, Any]:
    base = mode.removesuffix(NOEXPAND)
    fields: dict[str, Any] = {
        "fusion": fusion,
        "mode": "hybrid" if base.startswith("hybrid") else base,
        "rerank": base == "hybrid+rerank",
        "corag": base.startswith("hybrid+corag"),
        # A single signal's figure is that signal alone.
        "links": base.startswith("hybrid"),
        "expand": not mode.endswith(NOEXPAND),
        "top_k": TOP_K,
    }
    return fields


class ExpansionRecorder:
    """Wraps the pipeline's expander (`inner`, else query.retrieval.expansion's) to count which method
    each query's expansion used: the response lists the variants, not how they were made."""

    def __init__(self, inner: Callable[..., Any] | None = None) -> None:
        self.methods: Counter = Counter()
        self.error: str | None = None
        self._inner = inner
        if inner is None:
            try:
                from query.retrieval.expansion import expand_query
            except ImportError as exc:
                self.error = f"query.retrieval.expansion unavailable ({exc})"
            else:
                self._inner = expand_query

    def __call__(self, query: str, **kwargs: Any) -> Any:
        if self._inner is None:
            raise RuntimeError(self.error)
        result = self._inner(query, **kwargs)
        self.methods[str(getattr(result, "method", "unknown"))] += 1
        return result


def rrf_merge(run_corag: Callable[..., Any], k: int) -> Callable[..., Any]:
    """A CoRAG runner whose gathered chunks are ordered by RRF (query.retrieval.fusion) over the first
    retrieval and each hop's list of new chunks, ties keeping gathered order."""

    def runner(question: str, retrieve: Callable[..., Any], **kwargs: Any) -> Any:
        gathered, hops, notes = run_corag(question, retrieve, **kwargs)
        key_of = {c.chunk_id: c.key for c in gathered}
        first = [c.key for c in kwargs.get("first") or []]
        lists = [first] + [[key_of[i] for i in hop.new_chunk_ids if i in key_of] for hop in hops]
        score = rrf_scores(
            [
                RankedList("hybrid", n, [(i, Hit(c, 0.0)) for i, c in keys])
                for n, keys in enumerate(lists)
            ],
            k,
        )
        order = sorted(range(len(gathered)), key=lambda i: (-score.get(gathered[i].key, 0.0), i))
        return [gathered[i] for i in order], hops, [*notes, "eval: CoRAG hops merged by RRF"]

    return runner


def unavailable_reason(mode: str, engine: Engine) -> str | None:
    base = mode.removesuffix(NOEXPAND)
    if base == "hybrid+rerank":
        reranker, notes = engine.reranker()
        if reranker is None:
            return "no reranker available: " + ("; ".join(notes) or "none configured")
    if base.startswith("hybrid+corag"):
        try:
            engine.corag_runner()
        except ImportError as exc:
            return f"CoRAG module unavailable ({exc})"
    return None


def evaluate_mode(
    mode: str,
    data: BeirData,
    query_ids: list[str],
    engine: Engine,
    index: str,
    documents: Documents,
    recorder: ExpansionRecorder,
    log: Callable,
    runs: dict[str, dict[str, list[str]]] | None = None,
    fusion: str = DEFAULT_FUSION,
) -> ModeResult:
    result = ModeResult(mode)
    reason = unavailable_reason(mode, engine)
    if reason:
        result.unavailable = reason
        return result
    fields = request_fields(mode, fusion)
    per_query, latencies, hops = [], [], []
    stages: Counter = Counter()
    recorder.methods.clear()
    progress = Progress(len(query_ids), f"evaluate {mode}", log=log, unit="queries")
    for qid in query_ids:
        try:
            request = make_request({"query": data.queries[qid], "indexes": [index], **fields})
        except UsageError as exc:
            # The pipeline refuses it (e.g. an empty query): scored as nothing found, as a
            # user asking it would get nothing.
            result.notes[f"query refused: {exc}"] += 1
            per_query.append(score_query([], data.qrels[qid]))
            progress.advance()
            continue
        started = time.perf_counter()
        response = answer(request, engine)
        latencies.append((time.perf_counter() - started) * 1000.0)
        ranking = documents.ranking([str(c["chunk_id"]) for c in response.chunks])
        per_query.append(score_query(ranking, data.qrels[qid]))
        if runs is not None:
            runs.setdefault(mode, {})[qid] = ranking
        result.notes.update(set(response.notes))
        stages.update(response.timings_ms)
        if response.corag_trace is not None:
            hops.append(len(response.corag_trace))
        progress.advance()
    snap = progress.done()
    log(f"evaluated {mode}: {len(query_ids)} queries in {snap.elapsed_s:.1f}s")
    result.queries = len(query_ids)
    result.scores = mean_scores(per_query)
    result.by_needed = coverage_by_documents_needed(query_ids, data.qrels, per_query)
    result.by_label = scores_by_label(query_ids, data.labels, per_query)
    result.latency_ms = statistics.fmean(latencies) if latencies else 0.0
    result.p95_ms = _percentile(latencies, 95)
    result.stages_ms = {k: v / max(len(query_ids), 1) for k, v in stages.items()}
    if fields["expand"]:
        result.expansion = Counter(recorder.methods)
        if recorder.error:
            result.expansion[recorder.error] = len(query_ids)
    else:
        result.expansion = Counter({"off": len(query_ids)})
    if hops:
        result.corag_hops = statistics.fmean(hops)
    return result


def _percentile(values: list[float], pct: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(pct / 100 * len(ordered)) - 1))]


def run_eval(
    dataset: Path,
    *,
    split: str,
    modes: list[str],
    settings: Settings,
    store_dir: Path | None,
    limit: int | None,
    log: Callable[[str], object],
    engine_parts: dict[str, Any] | None = None,
    runs: dict[str, dict[str, list[str]]] | None = None,
    fusion: str = DEFAULT_FUSION,
    corpus_dir: Path | None = None,
    existing: str | None = None,
) -> dict[str, Any]:
    """Build the index, evaluate every mode; the report as a JSON-ready dict. `engine_parts`
    go to the Engine as given (tests inject stand-ins); `runs`, when given, receives each
    mode's document ranking per query. With `existing`, the index of that name in
    `store_dir` (an ingest's) is evaluated as it is, its documents judged by their doc ids,
    or with `corpus_dir` (the directory it was ingested from) by their paths."""
    if existing is not None and store_dir is None:
        raise SettingsError("--index needs --store, the store that holds the index")
    data = load_beir(dataset, split, corpus_dir, with_corpus=existing is None)
    query_ids = data.judged_queries()[: limit or None]
    if not query_ids:
        raise DatasetError(f"qrels/{split}.tsv judges no query of queries.jsonl as relevant")
    with tempfile.TemporaryDirectory(prefix="rag-eval-") as tmp:
        location = store_dir or Path(tmp)
        # Hundreds of queries: the store is searched as a worker searches it.
        store = open_store(str(location), settings, modes=LONG_LIVED)
        name = existing or index_name(data.name)
        if existing is not None:  # read first: a wrong name fails before a model loads
            built = as_built(store.open_index(name))
            log(f"index {name}: {json.dumps(built)}")
        parts = dict(engine_parts or {})
        if "embedder" not in parts:
            from core.embedding.runtimes import load_embedder

            parts["embedder"] = load_embedder(settings)
        if existing is None:
            built = build_in_store(data, store, name, settings, parts["embedder"], log)
            # As an ingest ends: the index's fusion rule from its own chunks (never from the
            # queries or judgements), which the default `auto` fusion then reads.
            calibrate_if_changed(settings, str(location), name, log=log, embedder=parts["embedder"])
        documents = Documents(store.open_index(name), by_path=data.corpus_dir is not None)
        # What the index's calibration decided, whether it ran now or an earlier run did.
        calibration = calibration_report(documents.index)
        if calibration is not None:
            built["calibration"] = calibration
        recorder = ExpansionRecorder(parts.get("expander"))
        parts["expander"] = recorder
        engine = Engine(settings, store, **parts)
        engine.warm_indexes()  # hundreds of queries: answer them as a worker would
        merged: Engine | None = None
        results = []
        try:
            for mode in modes:
                chosen = engine
                if mode.removesuffix(NOEXPAND) == "hybrid+corag-rrf" and not unavailable_reason(
                    mode, engine
                ):
                    if merged is None:
                        merged = Engine(
                            settings,
                            store,
                            **{
                                **parts,
                                "corag_runner": rrf_merge(engine.corag_runner(), settings.rrf_k),
                            },
                        )
                    chosen = merged
                results.append(
                    evaluate_mode(
                        mode, data, query_ids, chosen, name, documents, recorder, log, runs, fusion
                    )
                )
        finally:
            documents.index.close()
            engine.close()
            if merged is not None:
                merged.close()
    return {
        "dataset": data.name,
        "split": split,
        "queries": len(query_ids),
        "judged_queries": len(data.judged_queries()),
        "documents": built["documents"],
        "index": built,
        # The fusion decision `auto` used; None: never calibrated (the default rule, floor on).
        "calibration": built.get("calibration"),
        "settings": {
            "top_k": TOP_K,
            "candidates_per_signal": settings.candidates_per_signal,
            "fusion": fusion,
            "rrf_k": settings.rrf_k,
            "embedding_model": str(getattr(parts["embedder"], "model_id", "")),
            "embedding_precision": str(getattr(parts["embedder"], "precision", "fp32")),
        },
        "modes": {r.mode: r.to_json() for r in results},
    }
