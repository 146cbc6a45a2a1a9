"""Retrieval quality on BEIR-format data, through the real query pipeline.

    python -m query.eval DATASET_DIR [--split test] [--modes bm25,vector,hybrid,...]
        [--fusion adaptive|weighted|rrf] [--json] [--limit-queries N] [--store DIR]

DATASET_DIR holds `corpus.jsonl` (`_id`, `title`, `text`), `queries.jsonl` (`_id`, `text`)
and `qrels/<split>.tsv` (header, then query-id, corpus-id, score). Every corpus record
becomes one document of a throwaway index (a temporary directory, or index `eval-<name>`
in --store, where unchanged documents are reused on the next run); it is chunked by the
project's chunkers (Python source by the Python chunker, everything else as prose with the
title as its heading) and embedded with the configured model through the embedding cache
(settings.index_dir), so a second run embeds nothing. Each query of the split that has a
relevant judgement is asked with `answer(make_request(...))`, top_k 100, no token budget,
and at least 100 candidates per signal (the default 50 would cap Recall@100). Chunks map
back to their document; a document ranks where its best chunk ranks.

Modes: bm25, vector, hybrid (fusion only, no rerank), hybrid+rerank, hybrid+corag (CoRAG
hops, no rerank, so the difference is CoRAG's alone), and hybrid+corag-rrf, an eval-only
experiment: the same CoRAG hops, but each hop's new chunks are merged with the first
retrieval by reciprocal rank (`rrf_merge`) instead of appended below it — without a
reranker, appended chunks land below every first-round candidate and cannot reach the top
10 (see the README's evaluation notes). Any mode with the suffix `-noexpand`
runs without query expansion; the others expand as the pipeline does by default, and the
report names the expansion method that ran. A mode whose component is unavailable (no
reranker configured, no CoRAG module) is reported as unavailable with the reason, never as
a copy of hybrid.
"""

from __future__ import annotations

import argparse
import ast
import csv
import hashlib
import json
import re
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chunkers.model import Document
from core.cli import EXIT_USAGE, error_exit
from core.progress import Progress
from core.settings import Settings, SettingsError
from core.store.contract import Hit, IndexStore
from core.store.open import open_store
from loaders.ingest import ingest_documents
from query.engine import Engine
from query.fusion import RankedList, rrf_scores
from query.metrics import mean_scores, score_query, unique_ranking
from query.pipeline import UsageError, answer, make_request
from query.types import DEFAULT_FUSION, FUSIONS

BASE_MODES = ("bm25", "vector", "hybrid", "hybrid+rerank", "hybrid+corag", "hybrid+corag-rrf")
DEFAULT_MODES = "bm25,vector,hybrid,hybrid+rerank,hybrid+corag"
NOEXPAND = "-noexpand"
TOP_K = 100
MIN_CANDIDATES = 100
SOURCE = "beir"
METRIC_KEYS = ("ndcg@10", "recall@10", "recall@100", "mrr@10")


class DatasetError(ValueError):
    """The dataset directory is not usable BEIR data; the message names the file."""


# Data


@dataclass
class BeirData:
    name: str
    corpus: dict[str, tuple[str, str]]  # doc id -> (title, text)
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]  # query id -> doc id -> grade

    def judged_queries(self) -> list[str]:
        """Queries with a relevant judgement and a text, in qrels order (BEIR evaluates
        exactly these)."""
        return [
            q
            for q, docs in self.qrels.items()
            if q in self.queries and any(g > 0 for g in docs.values())
        ]


def load_beir(directory: Path, split: str) -> BeirData:
    corpus_file, queries_file = directory / "corpus.jsonl", directory / "queries.jsonl"
    qrels_file = directory / "qrels" / f"{split}.tsv"
    for path in (corpus_file, queries_file, qrels_file):
        if not path.is_file():
            raise DatasetError(
                f"{path} not found (BEIR layout: corpus.jsonl, queries.jsonl, qrels/<split>.tsv)"
            )
    corpus = {
        str(r["_id"]): (str(r.get("title") or ""), str(r.get("text") or ""))
        for r in _jsonl(corpus_file)
    }
    queries = {str(r["_id"]): str(r.get("text") or "") for r in _jsonl(queries_file)}
    qrels: dict[str, dict[str, int]] = {}
    with qrels_file.open(encoding="utf-8", newline="") as handle:
        rows = csv.reader(handle, delimiter="\t")
        header = next(rows, None)
        if header is None or header[:2] != ["query-id", "corpus-id"]:
            raise DatasetError(f"{qrels_file}: expected the header query-id, corpus-id, score")
        for number, row in enumerate(rows, start=2):
            if not row:
                continue
            try:
                qid, did, grade = row[0], row[1], int(row[2])
            except (IndexError, ValueError):
                raise DatasetError(f"{qrels_file}:{number}: malformed row {row!r}") from None
            qrels.setdefault(qid, {})[did] = grade
    return BeirData(directory.resolve().name, corpus, queries, qrels)


def _jsonl(path: Path) -> Iterable[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DatasetError(f"{path}:{number}: {exc.msg}") from None
            if not isinstance(record, dict) or "_id" not in record:
                raise DatasetError(f"{path}:{number}: expected an object with an _id")
            yield record


# Index


def looks_like_python(text: str) -> bool:
    """Function or class source (CoSQA): give it to the Python chunker, as ingest would a
    .py file; anything else is prose."""
    if not text.lstrip().startswith(("def ", "async def ", "class ", "@")):
        return False
    try:
        ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return True


def to_document(doc_id: str, title: str, text: str) -> Document:
    language = "python" if looks_like_python(text) else "markdown"
    body = text if text.strip() else title
    return Document(
        doc_id=doc_id,
        text=body,
        source=SOURCE,
        domain="python" if language == "python" else "general",
        language=language,
        content_hash=hashlib.sha256(f"{title}\x1f{body}".encode()).hexdigest(),
        origin=f"corpus.jsonl#{doc_id}",
        # The BEIR id travels as the chunk's path: results name their document by it.
        path=doc_id,
        title=title or None,
    )


def index_name(dataset: str) -> str:
    return "eval-" + (re.sub(r"[^a-z0-9_-]+", "-", dataset.lower()).strip("-") or "data")


def build_index(
    data: BeirData, index: IndexStore, settings: Settings, embedder: Any, log: Callable
) -> dict[str, Any]:
    """Chunk, embed (through the cache) and load the documents that are new or changed,
    with the same ingestion code as every other index (`loaders.ingest`)."""
    docs = [to_document(d, t, x) for d, (t, x) in data.corpus.items()]
    summary = ingest_documents(docs, index, settings, embedder=embedder, log=log)
    return {
        "documents": len(docs),
        "reused": summary.docs_unchanged,
        "chunks": index.stats().get("chunks"),
        "embedded": summary.chunks_embedded,
        "cache_hits": summary.embedding_cache_hits,
    }


# Evaluation


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
        out["notes"] = dict(self.notes.most_common(5))
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
        "expand": not mode.endswith(NOEXPAND),
        "top_k": TOP_K,
    }
    return fields


class ExpansionRecorder:
    """Wraps the pipeline's expander (`inner`, else query.expansion's) to count which method
    each query's expansion used: the response lists the variants, not how they were made."""

    def __init__(self, inner: Callable[..., Any] | None = None) -> None:
        self.methods: Counter = Counter()
        self.error: str | None = None
        self._inner = inner
        if inner is None:
            try:
                from query.expansion import expand_query
            except ImportError as exc:
                self.error = f"query.expansion unavailable ({exc})"
            else:
                self._inner = expand_query

    def __call__(self, query: str, **kwargs: Any) -> Any:
        if self._inner is None:
            raise RuntimeError(self.error)
        result = self._inner(query, **kwargs)
        self.methods[str(getattr(result, "method", "unknown"))] += 1
        return result


def rrf_merge(run_corag: Callable[..., Any], k: int) -> Callable[..., Any]:
    """A CoRAG runner whose gathered chunks are ordered by RRF (query.fusion) over the first
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
        ranking = unique_ranking(str(c["path"]) for c in response.chunks)
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
) -> dict[str, Any]:
    """Build the index, evaluate every mode; the report as a JSON-ready dict. `engine_parts`
    go to the Engine as given (tests inject stand-ins); `runs`, when given, receives each
    mode's document ranking per query."""
    data = load_beir(dataset, split)
    query_ids = data.judged_queries()[: limit or None]
    if not query_ids:
        raise DatasetError(f"qrels/{split}.tsv judges no query of queries.jsonl as relevant")
    with tempfile.TemporaryDirectory(prefix="rag-eval-") as tmp:
        location = store_dir or Path(tmp)
        store = open_store(str(location), settings)
        name = index_name(data.name)
        parts = dict(engine_parts or {})
        if "embedder" not in parts:
            from core.embedding.runtimes import load_embedder

            parts["embedder"] = load_embedder(settings)
        target = store.open_index(name, create=True)
        started = time.perf_counter()
        try:
            built = build_index(data, target, settings, parts["embedder"], log)
        finally:
            target.close()
        built["seconds"] = round(time.perf_counter() - started, 1)
        log(f"index {name}: {json.dumps(built)}")
        recorder = ExpansionRecorder(parts.get("expander"))
        parts["expander"] = recorder
        engine = Engine(settings, store, **parts)
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
                    evaluate_mode(mode, data, query_ids, chosen, name, recorder, log, runs, fusion)
                )
        finally:
            engine.close()
            if merged is not None:
                merged.close()
    return {
        "dataset": data.name,
        "split": split,
        "queries": len(query_ids),
        "judged_queries": len(data.judged_queries()),
        "documents": len(data.corpus),
        "index": built,
        "settings": {
            "top_k": TOP_K,
            "candidates_per_signal": settings.candidates_per_signal,
            "fusion": fusion,
            "rrf_k": settings.rrf_k,
            "embedding_model": str(getattr(parts["embedder"], "model_id", "")),
        },
        "modes": {r.mode: r.to_json() for r in results},
    }


# Output


def render(report: dict[str, Any]) -> str:
    lines = [
        f"{report['dataset']} / {report['split']}: {report['queries']} queries "
        f"(of {report['judged_queries']} judged), {report['documents']} documents, "
        f"{report['index'].get('chunks')} chunks, fusion {report['settings']['fusion']}",
        f"{'mode':<26} {'nDCG@10':>8} {'R@10':>7} {'R@100':>7} {'MRR@10':>7} "
        f"{'all@10':>7} {'all@20':>7} {'ms/q':>7}  expansion",
    ]
    for mode, r in report["modes"].items():
        if "unavailable" in r:
            lines.append(f"{mode:<26} unavailable: {r['unavailable']}")
            continue
        methods = ", ".join(f"{k} x{v}" for k, v in r["expansion"].items()) or "none ran"
        lines.append(
            f"{mode:<26} {r['ndcg@10']:>8.4f} {r['recall@10']:>7.4f} {r['recall@100']:>7.4f} "
            f"{r['mrr@10']:>7.4f} {r['all@10']:>7.3f} {r['all@20']:>7.3f} "
            f"{r['latency_ms']:>7.1f}  {methods}"
        )
    notes = {n for r in report["modes"].values() for n in r.get("notes", {})}
    lines.extend(f"note: {n}" for n in sorted(notes))
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m query.eval", description=__doc__)
    parser.add_argument("dataset", type=Path, help="BEIR-format dataset directory")
    parser.add_argument("--split", default="test", help="qrels/<split>.tsv (default: test)")
    parser.add_argument("--modes", default=DEFAULT_MODES, help=f"default: {DEFAULT_MODES}")
    parser.add_argument(
        "--fusion",
        choices=FUSIONS,
        default=DEFAULT_FUSION,
        help=f"fusion of the hybrid modes (default {DEFAULT_FUSION}, as python -m query)",
    )
    parser.add_argument("--json", action="store_true", help="last line: the report as JSON")
    parser.add_argument("--limit-queries", type=int, help="the first N judged queries only")
    parser.add_argument("--store", type=Path, help="keep the index in this store directory")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    try:
        modes = parse_modes(args.modes)
        if args.limit_queries is not None and args.limit_queries < 1:
            raise SettingsError("--limit-queries must be at least 1")
        settings = Settings.from_env()
        settings = settings.with_(
            candidates_per_signal=max(settings.candidates_per_signal, MIN_CANDIDATES)
        )
        report = run_eval(
            args.dataset,
            split=args.split,
            modes=modes,
            settings=settings,
            store_dir=args.store,
            limit=args.limit_queries,
            log=log,
            fusion=args.fusion,
        )
    except (DatasetError, SettingsError) as exc:
        return error_exit(exc, EXIT_USAGE)
    print(render(report))
    if args.json:
        print(json.dumps(report, sort_keys=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
