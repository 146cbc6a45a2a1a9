"""Retrieval quality while an index's vectors fill in (issue 37): nDCG@10 and recall@10 of
BM25 alone and of the hybrid fusion rules at several vector coverages of one dev set.

    .venv/bin/python bench/partial_coverage.py DATASET --split SPLIT --store DIR
        [--corpus DIR] [--coverage 0,0.5,1] [--rules adaptive,rrf] [--runs FILE] [--json]

    .venv/bin/python bench/partial_coverage.py --compare A.json B.json [--json]

The set is ingested once, fully, by the evaluation's own index building (`python -m
query.eval`'s, into DIR/full; unchanged documents are reused and the embedding cache of
RAG_INDEX_DIR serves known texts, so a rerun embeds nothing). For each coverage p < 1, a copy
of that index (DIR/p50, ...) keeps the vectors of the first p of its chunks in chunk_id
order and loses the rest: the state the vector phase (loaders/vectors.py, which embeds
pending chunks in chunk_id order) leaves when it has done p of its work. Each copy is then
evaluated as it stands (`run_eval(existing=...)`, `python -m query.eval --index`), never
ingested again, which would fill the vectors back in.

For the hybrid rules at p < 1 it also reports how the judged documents the rule finds split
by coverage: recall@10 of the (question, judged document) pairs whose document has no
vector at all against those whose every chunk has one, next to BM25 alone on the same
pairs. A rule that lets the vector leg's bonus push pending documents below their BM25 rank
shows as a pending recall under BM25's.

--runs FILE writes each mode's top-10 documents and nDCG@10 per question at full coverage;
--compare reads two such files (e.g. from this code and from an older one, run with
PYTHONPATH on its tree: only `run_eval` and the metrics are used at coverage 1) and reports
the questions whose top 10 or nDCG@10 differ.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import statistics
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.settings import Settings  # noqa: E402
from query.eval.beir import load_beir  # noqa: E402
from query.eval.index import index_name  # noqa: E402
from query.eval.metrics import ndcg_at, relevant  # noqa: E402
from query.eval.runner import run_eval  # noqa: E402

MIN_CANDIDATES = 100  # as python -m query.eval: Recall@100 needs 100 per signal
TOP = 10
Runs = dict[str, dict[str, list[str]]]  # mode -> question -> documents, best first


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def keep_vectors(index_file: Path, share: float) -> dict[str, int]:
    """Drop the vectors of all but the first `share` of the chunks in chunk_id order, and bump
    the vector generation as a vector-phase commit does (readers reload their matrix)."""
    conn = sqlite3.connect(index_file)
    try:
        with conn:
            chunks = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
            kept = int(share * chunks)
            conn.execute(
                "DELETE FROM vectors WHERE chunk_id NOT IN "
                "(SELECT chunk_id FROM chunks ORDER BY chunk_id LIMIT ?)",
                (kept,),
            )
            conn.execute("UPDATE meta SET vector_generation = vector_generation + 1")
        vectors = conn.execute("SELECT count(*) FROM vectors").fetchone()[0]
    finally:
        conn.close()
    return {"chunks": chunks, "vectors": vectors}


def documents_by_coverage(index_file: Path, by_path: bool) -> dict[str, str]:
    """Each judged id (doc_id, or path for a directory set): "covered" when every chunk of
    the document has a vector, "pending" when none has, "partial" otherwise."""
    column = "c.path" if by_path else "c.doc_id"
    conn = sqlite3.connect(f"{index_file.resolve().as_uri()}?mode=ro", uri=True)
    try:
        rows = conn.execute(
            f"SELECT {column}, count(*), count(v.chunk_id) FROM chunks AS c "  # noqa: S608
            "LEFT JOIN vectors AS v ON v.chunk_id = c.chunk_id GROUP BY 1"
        ).fetchall()
    finally:
        conn.close()
    classes = {0: "pending"}
    return {
        str(doc): "covered" if with_vector == chunks else classes.get(with_vector, "partial")
        for doc, chunks, with_vector in rows
    }


def recall_by_coverage(
    runs: dict[str, list[str]], qrels: dict[str, dict[str, int]], coverage: dict[str, str]
) -> dict[str, dict[str, float]]:
    """recall@10 over the (question, judged document) pairs of each coverage class."""
    found: dict[str, list[float]] = {}
    for qid, ranking in runs.items():
        top = set(ranking[:TOP])
        for doc in relevant(qrels[qid]):
            found.setdefault(coverage.get(doc, "absent"), []).append(float(doc in top))
    return {
        cls: {"pairs": len(hits), "recall@10": round(statistics.fmean(hits), 4)}
        for cls, hits in sorted(found.items())
    }


def evaluate(
    args: argparse.Namespace,
    settings: Settings,
    embedder: Any,
    store: Path,
    modes: list[str],
    fusion: str,
    existing: str | None,
) -> tuple[dict[str, Any], Runs]:
    runs: Runs = {}
    report = run_eval(
        args.dataset,
        split=args.split,
        modes=modes,
        settings=settings,
        store_dir=store,
        limit=None,
        log=log,
        engine_parts={"embedder": embedder},
        runs=runs,
        fusion=fusion,
        corpus_dir=args.corpus,
        existing=existing,
    )
    return report, runs


def measure(args: argparse.Namespace) -> dict[str, Any]:
    from core.embedding.runtimes import load_embedder

    settings = Settings.from_env()
    settings = settings.with_(
        candidates_per_signal=max(settings.candidates_per_signal, MIN_CANDIDATES)
    )
    embedder = load_embedder(settings)  # once: every evaluation below shares it
    data = load_beir(args.dataset, args.split, args.corpus, with_corpus=False)
    name = index_name(data.name)
    full = args.store / "full"
    rules = [r for r in args.rules.split(",") if r]
    coverages = sorted({float(p) for p in args.coverage.split(",")}, reverse=True)
    # The ingest: the full build, evaluated by BM25 alone (which no vector changes).
    report, _ = evaluate(args, settings, embedder, full, ["bm25"], rules[0], None)
    out: dict[str, Any] = {
        "dataset": data.name,
        "split": args.split,
        "queries": report["queries"],
        "index": report["index"],
        "embedding_model": report["settings"]["embedding_model"],
        "coverages": {},
    }
    per_query: dict[str, Any] = {}
    for p in coverages:
        if p >= 1.0:
            store, counts = full, None
        else:
            store = args.store / f"p{round(p * 100)}"
            shutil.rmtree(store, ignore_errors=True)
            shutil.copytree(full, store)
            counts = keep_vectors(store / f"{name}.sqlite", p)
        row: dict[str, Any] = {"vectors": counts}
        all_runs: Runs = {}
        for modes, fusion in [(["bm25"], rules[0])] + [(["hybrid"], r) for r in rules]:
            # At full coverage through the build path (which finds nothing to do): an older
            # tree (--compare) judges a directory set's own index only that way.
            existing = None if p >= 1.0 else name
            report, runs = evaluate(args, settings, embedder, store, modes, fusion, existing)
            label = modes[0] if modes == ["bm25"] else fusion
            scores = report["modes"][modes[0]]
            row[label] = {k: scores[k] for k in ("ndcg@10", "recall@10", "recall@100")}
            all_runs[label] = runs[modes[0]]
        if p < 1.0:
            coverage = documents_by_coverage(
                store / f"{name}.sqlite", by_path=args.corpus is not None
            )
            row["recall@10 by coverage"] = {
                label: recall_by_coverage(runs, data.qrels, coverage)
                for label, runs in all_runs.items()
            }
        else:
            per_query = top_lists(all_runs, data.qrels)
        out["coverages"][f"{p:g}"] = row
        log(f"coverage {p:g}: {json.dumps(row)}")
    if args.runs:
        args.runs.write_text(json.dumps(per_query))
    return out


def top_lists(runs: Runs, qrels: dict[str, dict[str, int]]) -> dict[str, Any]:
    """Each mode's top 10 and nDCG@10 per question."""
    return {
        label: {
            qid: {"top": ranking[:TOP], "ndcg@10": ndcg_at(ranking, qrels[qid], TOP)}
            for qid, ranking in by_query.items()
        }
        for label, by_query in runs.items()
    }


def compare(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """Per mode: questions compared, and those whose top 10 or nDCG@10 differ."""
    out: dict[str, Any] = {}
    for label in sorted(set(a) & set(b)):
        qa, qb = a[label], b[label]
        shared = sorted(set(qa) & set(qb))
        out[label] = {
            "questions": len(shared),
            "only_in_one": len(set(qa) ^ set(qb)),
            "top10_differs": [q for q in shared if qa[q]["top"] != qb[q]["top"]],
            "ndcg_differs": [q for q in shared if abs(qa[q]["ndcg@10"] - qb[q]["ndcg@10"]) > 1e-12],
        }
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", type=Path, nargs="?")
    parser.add_argument("--split", default="test")
    parser.add_argument("--store", type=Path, help="the full index and its copies go here")
    parser.add_argument("--corpus", type=Path, help="a directory set's files (query.eval's)")
    parser.add_argument("--coverage", default="0,0.5,1", help="shares of chunks with a vector")
    parser.add_argument("--rules", default="adaptive,rrf", help="hybrid fusion rules")
    parser.add_argument("--runs", type=Path, help="write the per-question top 10s here")
    parser.add_argument("--compare", type=Path, nargs=2, metavar="RUNS")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.compare:
        result = compare(*(json.loads(p.read_text()) for p in args.compare))
    elif args.dataset is None or args.store is None:
        parser.error("DATASET and --store are needed (or --compare A B)")
    else:
        result = measure(args)
    print(json.dumps(result, indent=None if args.json else 2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
