"""The torch-free ONNX graph (core/embedding/onnx_graph.py) against another ONNX file of the
same model, typically torch's export of it, in one run:

    .venv/bin/python bench/onnx_graph.py --reference TORCH_EXPORT.onnx [--docs 300]
        [--queries 50] [--caches INDEX_DIR_A INDEX_DIR_B --dataset DIR] [--json]

- build: seconds to build the graph from model.safetensors and config.json (imports apart);
- agreement: cosine of each pair of vectors on SciFact chunks (as `python -m query.eval`
  chunks them), minimum and maximum absolute difference per component;
- speed: texts/s on those chunks and one-query latency, the two files taking turns
  (bench/embed_precision.py's alternation: only the ratio within a run is a claim);
- with --caches: the embedding caches of two `python -m query.eval` runs (RAG_INDEX_DIR
  of each, one per file), compared vector by vector over every chunk both embedded; with
  --dataset, the set's queries embedded by each file and ranked against its own cache's
  vectors: how many queries get the same top 10 chunks, in the same order.
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

from core.embedding.models import model_spec, resolve_model_dir  # noqa: E402
from core.embedding.onnx_graph import build_graph  # noqa: E402
from core.embedding.onnx_runtime import OnnxEmbedder  # noqa: E402
from core.settings import Settings  # noqa: E402


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
    a: Path, b: Path, embedders: dict[str, OnnxEmbedder], queries: list[str]
) -> dict[str, Any]:
    left, right = (cache_vectors(d / "cache" / "embeddings.sqlite") for d in (a, b))
    keys = sorted(left.keys() & right.keys())
    chunks = [np.vstack([side[k] for k in keys]) for side in (left, right)]
    out = {"only_in_one": len(left.keys() ^ right.keys()), **agreement(*chunks)}
    if queries:
        tops = [
            np.argsort(-(embedder.embed_queries(queries) @ vectors.T), axis=1)[:, :10]
            for embedder, vectors in zip(embedders.values(), chunks, strict=True)
        ]
        out["queries"] = len(queries)
        out["same_top10"] = int((tops[0] == tops[1]).all(axis=1).sum())
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", type=Path, required=True, help="the other ONNX file")
    parser.add_argument("--docs", type=int, default=300, help="SciFact documents chunked")
    parser.add_argument("--skip-speed", action="store_true", help="build and agreement only")
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--caches", type=Path, nargs=2, metavar=("INDEX_DIR_A", "INDEX_DIR_B"))
    parser.add_argument("--dataset", type=Path, help="the eval set of --caches (queries.jsonl)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    settings = Settings()
    model_dir = resolve_model_dir(settings.embedding_model)
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
        texts = scifact_texts(settings, args.docs)
        out["agreement"] = agreement(
            embedders["reference"].embed_documents(texts), embedders["built"].embed_documents(texts)
        )
        if not args.skip_speed:
            out["speed_load_before"] = load()
            out["corpus"] = corpus_rates(embedders, texts)
            out["query"] = query_latency(embedders, scifact_queries(args.queries))
            out["speed_load_after"] = load()
        if args.caches:
            queries = []
            if args.dataset:
                lines = (args.dataset / "queries.jsonl").read_text(encoding="utf-8").splitlines()
                queries = [json.loads(line)["text"] for line in lines if line.strip()]
            out["eval_caches"] = compare_caches(*args.caches, embedders, queries)
    print(json.dumps(out) if args.json else json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
