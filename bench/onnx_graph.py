"""The torch-free ONNX graph (core/embedding/onnx_graph.py) against another ONNX file of the
same model, typically torch's export of it, in one run:

    .venv/bin/python bench/onnx_graph.py --reference TORCH_EXPORT.onnx [--docs 300]
        [--queries 50] [--caches INDEX_DIR_A INDEX_DIR_B --dataset DIR [--split dev]]
        [--reports REPORT_A REPORT_B] [--json]

- build: seconds to build the graph from model.safetensors and config.json (imports apart);
- agreement: cosine of each pair of vectors on SciFact chunks (as `python -m query.eval`
  chunks them), minimum and maximum absolute difference per component;
- speed: texts/s on those chunks and one-query latency, the two files taking turns
  (bench/embed_precision.py's alternation: only the ratio within a run is a claim);
- with --caches: the embedding caches of two `python -m query.eval` runs (RAG_INDEX_DIR
  of each, one per file), compared vector by vector over every chunk both embedded; with
  --dataset, the queries the eval asks (those of --split with a relevant judgement)
  embedded by each file and ranked against its own cache's vectors: how many queries get
  the same top 10 chunks, in the same order, and the ids of those that do not;
- with --reports: the two runs' `--json` reports (their last lines), nDCG@10 of each mode
  side by side and every other figure that differs (timings apart).
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.append(str(Path(__file__).resolve().parent))  # after the project: bench/query.py

from embed_precision import corpus_rates, query_latency, scifact_queries, scifact_texts  # noqa: E402

from core.embedding.model_files import model_dir as local_model_dir  # noqa: E402
from core.embedding.models import model_spec  # noqa: E402
from core.embedding.onnx_graph import build_graph  # noqa: E402
from core.embedding.onnx_runtime import OnnxEmbedder  # noqa: E402
from core.settings import Settings  # noqa: E402
from query.eval.beir import load_beir  # noqa: E402


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def agreement(a: np.ndarray, b: np.ndarray) -> dict[str, Any]:
    cos = np.einsum("ij,ij->i", a, b)
    return {
        "n": int(cos.size),
        "cosine_min": float(cos.min()),
        "cosine_mean": float(cos.mean()),
        "max_abs_difference": float(np.abs(a - b).max()),
    }


def cache_vectors(path: Path) -> dict[str, np.ndarray]:
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT key, vector FROM embeddings").fetchall()
    return {key: np.frombuffer(blob, dtype=np.float32) for key, blob in rows}


def compare_caches(
    a: Path, b: Path, embedders: dict[str, OnnxEmbedder], queries: dict[str, str]
) -> dict[str, Any]:
    left, right = (cache_vectors(d / "cache" / "embeddings.sqlite") for d in (a, b))
    keys = sorted(left.keys() & right.keys())
    chunks = [np.vstack([side[k] for k in keys]) for side in (left, right)]
    out = {"only_in_one": len(left.keys() ^ right.keys()), **agreement(*chunks)}
    if queries:
        texts = list(queries.values())
        tops = [
            np.argsort(-(embedder.embed_queries(texts) @ vectors.T), axis=1)[:, :10]
            for embedder, vectors in zip(embedders.values(), chunks, strict=True)
        ]
        same = (tops[0] == tops[1]).all(axis=1)
        out["queries"] = len(queries)
        out["same_top10"] = int(same.sum())
        out["different_top10"] = [qid for qid, kept in zip(queries, same, strict=True) if not kept]
    return out


# Report fields that measure time, not retrieval: they differ between any two runs.
TIMING_FIELDS = {"seconds", "latency_ms", "p95_ms", "stages_ms", "at"}


def flat(value: Any, path: str = "") -> dict[str, Any]:
    if isinstance(value, dict):
        return {
            k: v
            for key, item in value.items()
            if key not in TIMING_FIELDS
            for k, v in flat(item, f"{path}/{key}").items()
        }
    return {path: value}


def compare_reports(a: Path, b: Path) -> dict[str, Any]:
    left, right = (json.loads(p.read_text(encoding="utf-8").splitlines()[-1]) for p in (a, b))
    ndcg = {
        mode: [left["modes"][mode].get("ndcg@10"), right["modes"][mode].get("ndcg@10")]
        for mode in left["modes"]
    }
    fa, fb = flat(left), flat(right)
    differing = {
        k: [fa.get(k), fb.get(k)] for k in sorted(fa.keys() | fb.keys()) if fa.get(k) != fb.get(k)
    }
    return {"ndcg@10": ndcg, "figures": len(fa), "differing": differing}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", type=Path, required=True, help="the other ONNX file")
    parser.add_argument(
        "--docs",
        type=int,
        default=300,
        help="SciFact documents chunked (0: no agreement, no speed)",
    )
    parser.add_argument("--skip-speed", action="store_true", help="build and agreement only")
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--caches", type=Path, nargs=2, metavar=("INDEX_DIR_A", "INDEX_DIR_B"))
    parser.add_argument("--dataset", type=Path, help="the eval set of --caches (BEIR layout)")
    parser.add_argument("--split", default="dev", help="the qrels split the eval ran")
    parser.add_argument("--reports", type=Path, nargs=2, metavar=("REPORT_A", "REPORT_B"))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    settings = Settings()
    model_dir = local_model_dir(settings)
    spec = model_spec(settings.embedding_model)
    import onnx  # noqa: F401  (imported before the clock: the figure is the build's)
    import safetensors.numpy  # noqa: F401

    out: dict[str, Any] = {"model": spec.model_id}
    with tempfile.TemporaryDirectory() as tmp:
        built = Path(tmp) / "built.onnx"
        started = time.perf_counter()
        build_graph(model_dir, built)
        out["build_s"] = round(time.perf_counter() - started, 2)
        out["build_load"] = load()
        embedders = {
            "reference": OnnxEmbedder(args.reference, model_dir, spec),
            "built": OnnxEmbedder(built, model_dir, spec),
        }
        texts = scifact_texts(settings, args.docs) if args.docs else []
        if texts:
            out["agreement"] = agreement(
                *(embedder.embed_documents(texts) for embedder in embedders.values())
            )
        if texts and not args.skip_speed:
            out["speed_load_before"] = load()
            out["corpus"] = corpus_rates(embedders, texts)
            out["query"] = query_latency(embedders, scifact_queries(args.queries))
            out["speed_load_after"] = load()
        if args.caches:
            queries = {}
            if args.dataset:
                data = load_beir(args.dataset, args.split, with_corpus=False)
                queries = {qid: data.queries[qid] for qid in data.judged_queries()}
            out["eval_caches"] = compare_caches(*args.caches, embedders, queries)
    if args.reports:
        out["eval_reports"] = compare_reports(*args.reports)
    print(json.dumps(out) if args.json else json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
