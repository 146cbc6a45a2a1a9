"""Vector search with the sign-code shortlist against exact search: recall@10 on real
embeddings, under filters, and latency at synthetic sizes.

    .venv/bin/python bench/vectors.py --index A.sqlite [--index B.sqlite ...]
        --queries Q.jsonl [--queries ...] [--per-file 150] [--sizes 100000,1000000] [--json]

Recall: the vectors of the given SQLite indexes (e.g. the eval's throwaway indexes of the
four dev corpora) are searched with the real query embeddings of the given BEIR query
files; each row gets a random domain (1 of 5) and a random iOS version range, so filtered
searches (one domain: ~20 % of rows; one domain and a version: ~10 %) run on real vectors.
Random vectors have no neighbourhood structure, so latency alone is measured on them.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.embedding.runtimes import load_embedder  # noqa: E402
from core.settings import Settings  # noqa: E402
from core.store.filters import SearchFilter  # noqa: E402
from core.store.sqlite.columns import FilterColumns  # noqa: E402
from core.store.sqlite.vectors import VectorSnapshot, decode_vectors, normalise_rows  # noqa: E402

DOMAINS = ["ios", "macos", "swift", "python", "general"]
FILTERS = {
    "none": SearchFilter(),
    "one domain": SearchFilter(domains=("swift",), include_user_codebase=False),
    "domain + iOS 17": SearchFilter(
        domains=("ios",), include_user_codebase=False, ios_version_int=170000
    ),
}


def snapshot(matrix: np.ndarray, seed: int) -> VectorSnapshot:
    rng = np.random.default_rng(seed)
    n = len(matrix)
    low = rng.choice([None, 130000, 150000, 170000, 180000], size=n).tolist()
    cols = [
        rng.choice(DOMAINS, size=n).tolist(),
        ["apple_docs"] * n,
        low,
        [None] * n,
        [False] * n,
        [None] * n,
        [None] * n,
        [None] * n,
    ]
    ids = [f"r{i}" for i in range(n)]
    from core.store.sqlite.sign_codes import sign_codes

    return VectorSnapshot(
        ("bench", "x", 0), ids, matrix, FilterColumns.from_columns(cols), codes=sign_codes(matrix)
    )


def exact(snap: VectorSnapshot, query: np.ndarray, filt: SearchFilter, k: int) -> list[str]:
    plain = VectorSnapshot(snap.key, snap.chunk_ids, snap.matrix, snap.columns, codes=None)
    return [h.chunk_id for h in plain.search(query, filt, k)]


def timed(fn) -> tuple[Any, float]:
    started = time.perf_counter()
    out = fn()
    return out, (time.perf_counter() - started) * 1000


def recall(matrix: np.ndarray, queries: np.ndarray) -> dict[str, Any]:
    snap = snapshot(matrix, seed=3)
    out: dict[str, Any] = {"rows": len(matrix), "queries": len(queries)}
    for name, filt in FILTERS.items():
        found, fast_ms, exact_ms = [], [], []
        for q in queries:
            hits, ms = timed(lambda q=q, f=filt: [h.chunk_id for h in snap.search(q, f, 10)])
            truth, ems = timed(lambda q=q, f=filt: exact(snap, q, f, 10))
            found.append(len(set(hits) & set(truth)) / max(1, len(truth)))
            fast_ms.append(ms)
            exact_ms.append(ems)
        admitted = snap.mask(filt)
        out[name] = {
            "admitted": int(len(matrix) if admitted is None else admitted.sum()),
            "recall@10": round(statistics.fmean(found), 4),
            "min": round(min(found), 2),
            "p50_ms": round(statistics.median(fast_ms), 2),
            "exact_p50_ms": round(statistics.median(exact_ms), 2),
        }
    return out


def latency(size: int, count: int) -> dict[str, Any]:
    rng = np.random.default_rng(size)
    matrix = normalise_rows(rng.standard_normal((size, 384), dtype=np.float32))
    snap = snapshot(matrix, seed=4)
    queries = normalise_rows(rng.standard_normal((count, 384), dtype=np.float32))
    out: dict[str, Any] = {}
    for name, filt in FILTERS.items():
        fast = [timed(lambda q=q, f=filt: snap.search(q, f, 10))[1] for q in queries]
        slow = [timed(lambda q=q, f=filt: exact(snap, q, f, 10))[1] for q in queries]
        fast.sort()
        out[name] = {
            "p50_ms": round(statistics.median(fast), 2),
            "p95_ms": round(fast[int(0.95 * len(fast)) - 1], 2),
            "exact_p50_ms": round(statistics.median(slow), 2),
        }
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", action="append", default=[], type=Path)
    parser.add_argument("--queries", action="append", default=[], type=Path)
    parser.add_argument("--per-file", type=int, default=150)
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--timed-queries", type=int, default=50)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    results: dict[str, Any] = {}
    if args.index and args.queries:
        blobs = []
        for path in args.index:
            with sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True) as conn:
                blobs += [r[0] for r in conn.execute("SELECT embedding FROM vectors")]
        with sqlite3.connect(args.index[0]) as conn:
            (dim,) = conn.execute("SELECT dim FROM meta").fetchone()
        matrix = decode_vectors(blobs, dim)
        texts = []
        for path in args.queries:
            lines = path.read_text().splitlines()[: args.per_file]
            texts += [json.loads(line)["text"] for line in lines if line.strip()]
        embedder = load_embedder(Settings.from_env())
        queries = normalise_rows(np.asarray(embedder.embed_queries(texts), dtype=np.float32))
        results["recall"] = recall(matrix, queries)
    for size in [int(s) for s in args.sizes.split(",") if s.strip()]:
        results[f"latency_{size}"] = latency(size, args.timed_queries)
    print(json.dumps(results) if args.json else json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
