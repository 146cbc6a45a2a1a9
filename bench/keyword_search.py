"""Keyword search on synthetic indexes: FTS5's `MATCH … ORDER BY bm25()` against the
in-memory postings (core/store/sqlite/keyword.py), on the same index and queries.

    .venv/bin/python bench/keyword_search.py [--chunks 100000] [--queries 100] [--words 200]
        [--store DIR] [--json]

Per size: the index is built like bench/query.py's (or reused from --store DIR/<size>),
then the postings are built from the bodies and saved, loaded back from the saved file
(what a one-shot `python -m query` pays after the first query of a generation), and both
searches answer --queries queries of each mix (`common`: words in 30-100% of the chunks;
`typical`: words in 0.4-8%; bench/query.py's queries()) for the top 50 — the keyword leg's
candidates in the pipeline. Reports p50/p95 ms per search and mix, the build and load
times, the saved file's size, and whether the two searches agree (scores within 1e-9).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.query import INDEX, build, queries  # noqa: E402
from core.embedding.models import canonical_model_id  # noqa: E402
from core.settings import Settings  # noqa: E402
from core.store.filters import SearchFilter  # noqa: E402
from core.store.modes import LONG_LIVED  # noqa: E402
from core.store.sqlite.keyword import KEYWORDS  # noqa: E402
from core.store.sqlite.store import SQLiteStore  # noqa: E402

K = 50


def timed(fn, texts: list[str]) -> tuple[list[Any], dict[str, float]]:
    out, ms = [], []
    for text in texts:
        started = time.perf_counter()
        out.append(fn(text, SearchFilter(), K))
        ms.append((time.perf_counter() - started) * 1000)
    ms.sort()
    return out, {
        "p50": round(statistics.median(ms), 2),
        "p95": round(ms[max(0, int(0.95 * len(ms)) - 1)], 2),
    }


def agree(mine: list[Any], reference: list[Any]) -> bool:
    return all(
        len(a) == len(b) and all(abs(x.score - y.score) < 1e-9 for x, y in zip(a, b, strict=True))
        for a, b in zip(mine, reference, strict=True)
    )


def measure(store_dir: Path, size: int, words: int, count: int, log) -> dict[str, Any]:
    entry: dict[str, Any] = {}
    if not (store_dir / f"{INDEX}.sqlite").exists():
        model_id = canonical_model_id(Settings().embedding_model)
        entry["index_build_s"] = round(build(store_dir, size, words, model_id, log), 1)
    # LONG_LIVED: bm25_search answers from the postings (a one-shot store asks FTS5).
    index = SQLiteStore(store_dir, modes=LONG_LIVED).open_index(INDEX)
    saved = Path(f"{index.path}-keywords")
    saved.unlink(missing_ok=True)
    KEYWORDS.evict(str(index.path.resolve()))
    started = time.perf_counter()
    snap = index.keywords()
    entry["postings_build_and_save_s"] = round(time.perf_counter() - started, 2)
    entry["postings"] = int(snap.postings.rows.size)
    entry["terms"] = len(snap.postings.terms)
    entry["saved_mb"] = round(saved.stat().st_size / 1e6, 1)
    KEYWORDS.evict(str(index.path.resolve()))
    started = time.perf_counter()
    index.keywords()
    entry["postings_load_s"] = round(time.perf_counter() - started, 2)
    for mix in ("common", "typical"):
        texts = queries(count, seed=7, mix=mix)
        log(f"{size} chunks, {mix} queries: FTS5, then the postings")
        reference, fts = timed(index.fts_bm25_search, texts)
        mine, memory = timed(index.bm25_search, texts)
        entry[mix] = {"fts5_ms": fts, "postings_ms": memory, "agree": agree(mine, reference)}
    index.close()
    return entry


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", default="100000", help="comma-separated sizes")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--words", type=int, default=200)
    parser.add_argument("--store", type=Path, help="keep (and reuse) the indexes under DIR")
    parser.add_argument("--json", action="store_true", help="the results as JSON")
    args = parser.parse_args(argv)

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    results: dict[str, Any] = {"queries": args.queries, "k": K, "sizes": {}}
    with tempfile.TemporaryDirectory(prefix="bench-keyword-") as tmp:
        root = args.store or Path(tmp)
        for size in [int(s) for s in args.chunks.split(",") if s.strip()]:
            entry = measure(root / str(size), size, args.words, args.queries, log)
            results["sizes"][str(size)] = entry
            if not args.json:
                print(f"{size} chunks: {json.dumps(entry)}")
    if args.json:
        print(json.dumps(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
