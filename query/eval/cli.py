"""Retrieval quality on BEIR-format data, through the real query pipeline.

    python -m query.eval DATASET_DIR [--split test] [--modes bm25,vector,hybrid,...]
        [--fusion adaptive|weighted|rrf] [--json] [--limit-queries N] [--store DIR]
        [--corpus DIR] [--index NAME]

DATASET_DIR holds `corpus.jsonl` (`_id`, `title`, `text`), `queries.jsonl` (`_id`, `text`)
and `qrels/<split>.tsv` (header, then query-id, corpus-id, score). Every corpus record
becomes one document of a throwaway index (a temporary directory, or index `eval-<name>`
in --store, where unchanged documents are reused on the next run), read as a line of a
user's JSONL file is read (`id`, `title`, `text`, no `path`; `language` python for source
code) and named by its id; it is chunked by the project's chunkers (Python source by the
Python chunker, everything else as prose with the title as its heading) and embedded with the configured model through the embedding cache
(settings.index_dir), so a second run embeds nothing. Each query of the split that has a
relevant judgement is asked with `answer(make_request(...))`, top_k 100, no token budget,
and at least 100 candidates per signal (the default 50 would cap Recall@100). Chunks map
back to their document by its doc_id; a document ranks where its best chunk ranks. With
--index NAME, that index of --store (one an ingest built) is evaluated as it is: nothing
is read from corpus.jsonl or built, and its documents' ids must be the qrels' corpus ids
(with --corpus DIR, the directory it was ingested from, their paths relative to DIR). Its
vectors need not be complete: an index whose vector phase is still running is measured as
a question would find it.

Modes: bm25, vector, hybrid (fusion only, no rerank), hybrid+rerank, hybrid+corag (CoRAG
hops, no rerank, so the difference is CoRAG's alone), and hybrid+corag-rrf, an eval-only
experiment: the same CoRAG hops, but each hop's new chunks are merged with the first
retrieval by reciprocal rank (`rrf_merge`) instead of appended below it — without a
reranker, appended chunks land below every first-round candidate and cannot reach the top
10 (see docs/evaluation.md). Any mode with the suffix `-noexpand`
runs without query expansion; the others expand as the pipeline does by default, and the
report names the expansion method that ran. A mode whose component is unavailable (no
reranker configured, no CoRAG module) is reported as unavailable with the reason, never as
a copy of hybrid.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path
from typing import Any

from core.cli import EXIT_USAGE, error_exit
from core.settings import Settings, SettingsError
from core.store.contract import UnknownIndex
from query.eval.beir import DatasetError
from query.eval.runner import DEFAULT_MODES, parse_modes, run_eval
from query.types import DEFAULT_FUSION, FUSIONS

MIN_CANDIDATES = 100


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
    for mode, r in report["modes"].items():
        for group, g in (r.get("by_documents_needed") or {}).items():
            lines.append(
                f"  {mode} · questions needing {group} documents ({int(g['queries'])}): "
                f"all@10 {g['all@10']:.3f}, all@20 {g['all@20']:.3f}"
            )
    for mode, r in report["modes"].items():
        for label, groups in (r.get("by_label") or {}).items():
            for value, g in groups.items():
                lines.append(
                    f"  {mode} · {label} {value} ({int(g['queries'])}): "
                    f"nDCG@10 {g['ndcg@10']:.4f}, R@10 {g['recall@10']:.4f}"
                )
    decision = report.get("calibration")
    if decision:
        lines.append(
            f"calibration: {decision['rule']}, identifier floor "
            f"{'on' if decision['floor'] else 'off'}, usage floor "
            f"{'on' if decision.get('usage_floor') else 'off'} (RRF {decision['gain']:+.4f} reciprocal "
            f"rank, 95 % lower bound {decision['gain_low']:+.4f}, {decision['pairs']} pairs, "
            f"{decision['seconds']}s)"
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
    parser.add_argument(
        "--corpus",
        type=Path,
        help="a directory of files to ingest as the corpus instead of corpus.jsonl; the qrels "
        "name files by their path relative to it (bench/swift-docs-eval); with --index, the "
        "directory that index was ingested from",
    )
    parser.add_argument(
        "--index",
        help="evaluate this index of --store as it is (one `python -m flows.ingest` built) "
        "instead of building one; its documents are judged by their ids",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    # Building the index takes minutes: the progress of its stages (count, rate, ETA), which
    # they log through their module loggers, goes to stderr too.
    for name in ("rag.progress", "rag.ingest"):
        stage_log = logging.getLogger(name)
        if not stage_log.handlers:
            handler = logging.StreamHandler(sys.stderr)
            handler.setFormatter(logging.Formatter("%(message)s"))
            stage_log.addHandler(handler)
            stage_log.setLevel(logging.INFO)

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
            corpus_dir=args.corpus,
            existing=args.index,
        )
    except (DatasetError, SettingsError, UnknownIndex) as exc:
        return error_exit(exc, EXIT_USAGE)
    print(render(report))
    if args.json:
        print(json.dumps(report, sort_keys=False))
    return 0
