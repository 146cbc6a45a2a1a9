"""The cosine half of the precision quality guard: a lower precision's vectors against fp32's.

    .venv/bin/python bench/precision_guard.py --runtime onnx --precision int8 [--chunks 2000]

Chunks of three real corpora, chunked as an ingest chunks them (query.eval's documents,
chunkers, `embedding_text`): SciFact abstracts (prose), CoSQA functions (Python code) and the
Swift documentation (Markdown with code blocks), 40/30/30 %, a fixed seeded sample. Both
precisions embed the same texts through the same runtime; the figures are the cosine of each
pair of unit vectors: mean, 1st percentile, minimum, and per corpus. The guard needs mean
>= 0.995 and 1st percentile >= 0.98 (core/embedding/models.py), then nDCG@10 within 0.003
of fp32 on the four dev sets (`python -m query.eval`, docs/evaluation.md); both go into the
model registry's `PrecisionGuard`.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from chunkers.embedding_text import embedding_text  # noqa: E402
from chunkers.parallel import ChunkSizes, chunk_documents  # noqa: E402
from chunkers.sources.discovery import discover  # noqa: E402
from chunkers.sources.reading import Defaults, read_all  # noqa: E402
from core.embedding.runtimes import load_local_embedder  # noqa: E402
from core.settings import Settings  # noqa: E402
from query.eval.beir import load_beir  # noqa: E402
from query.eval.index import to_document  # noqa: E402

DATA = Path("/work/shared/data")
SPLITS = {"scifact": "train", "cosqa": "dev"}  # any split: only the corpus is read
SHARES = {"scifact": 0.4, "cosqa": 0.3, "swift-docs": 0.3}


def corpus_texts(name: str, settings: Settings) -> list[str]:
    """Every chunk's embedding text of one corpus, in corpus order."""
    if name == "swift-docs":
        docs = read_all(discover([DATA / "swift-docs"]), Defaults()).documents
    else:
        data = load_beir(DATA / name, SPLITS[name])
        docs = [to_document(d, t, x) for d, (t, x) in data.corpus.items()]
    sizes = ChunkSizes.from_settings(settings)
    chunks = [c for r in chunk_documents(docs, sizes) for c in r.chunks]
    return [embedding_text(c.context, c.content, c.language) for c in chunks]


def guard_texts(count: int, settings: Settings, seed: int = 29) -> dict[str, list[str]]:
    rng = random.Random(seed)
    out: dict[str, list[str]] = {}
    for name, share in SHARES.items():
        texts = corpus_texts(name, settings)
        out[name] = rng.sample(texts, min(len(texts), round(count * share)))
    return out


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    # Both are unit rows (every embedder normalises); the dot product is the cosine.
    return np.einsum("ij,ij->i", a, b)


def summary(cos: np.ndarray) -> dict[str, Any]:
    return {
        "n": int(cos.size),
        "mean": round(float(cos.mean()), 5),
        "p1": round(float(np.percentile(cos, 1)), 5),
        "min": round(float(cos.min()), 5),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runtime", default="onnx", choices=["onnx", "torch", "mlx"])
    parser.add_argument("--precision", required=True, choices=["bf16", "int8", "fp16"])
    parser.add_argument("--chunks", type=int, default=2000)
    args = parser.parse_args()
    settings = Settings()
    loadavg_start = os.getloadavg()
    by_corpus = guard_texts(args.chunks, settings)
    texts = [t for group in by_corpus.values() for t in group]
    vectors: dict[str, np.ndarray] = {}
    seconds: dict[str, float] = {}
    for precision in ("fp32", args.precision):
        chosen = settings.model_copy(update={"embedding_precision": precision})
        embedder = load_local_embedder(chosen, args.runtime)
        started = time.perf_counter()
        vectors[precision] = embedder.embed_documents(texts)
        seconds[precision] = round(time.perf_counter() - started, 1)
    cos = cosines(vectors["fp32"], vectors[args.precision])
    result: dict[str, Any] = {
        "runtime": args.runtime,
        "precision": args.precision,
        "all": summary(cos),
        "seconds": seconds,
        "loadavg": [round(x, 2) for x in (*loadavg_start, *os.getloadavg())],
    }
    start = 0
    for name, group in by_corpus.items():
        result[name] = summary(cos[start : start + len(group)])
        start += len(group)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
