"""Measure the TiDB store's bounded keyword leg: rows read and latency of `bm25_search` at
several per-term bounds, and how much of the unbounded top-k each bound keeps.

    source .ci/mariadb.sh && start_private_mariadb
    .venv/bin/python bench/tidb_keyword.py --dsn "$RAG_TEST_MYSQL_DSN" [--chunks 50000]
        [--bounds 1000,10000] [--repeats 3]

One index of synthetic chunks (bench/tidb_load.py's: Zipf-like words, so the listed query
words are in almost every chunk, and made-up rare words in few), loaded with LOAD DATA. Each
query runs with every bound and with no bound in effect (a bound above every df reads every
posting, as the keyword leg did before migration 0005). "rows read" is the session's
Handler_read_key + _next + _prev delta of one search (MariaDB's counters of index entries
read), "kept" the share of the unbounded top-k that the bounded top-k has too.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.tidb_load import measure_load, open_fresh, synthetic_chunks, unit_vectors  # noqa: E402
from core.settings import Settings  # noqa: E402
from core.store.filters import SearchFilter  # noqa: E402
from core.store.tidb.store import TiDBIndex, TiDBStore  # noqa: E402

UNBOUNDED = 10**9
# Common words of the synthetic vocabulary (df near the corpus size), then rare ones.
QUERIES = {
    "common": "navigation stack view",
    "mixed": "async task term2000",
    "rare": "term9000 term15000 term21000",
}
K = 50


def handler_reads(index: TiDBIndex) -> int:
    with index._conn.cursor() as cur:  # the bench may look inside: the session's counters
        cur.execute("SHOW SESSION STATUS LIKE 'Handler_read%%'")
        values = {name: int(value) for name, value in cur.fetchall()}
    return sum(values[f"Handler_read_{kind}"] for kind in ("key", "next", "prev"))


def measure(index: TiDBIndex, query: str, repeats: int) -> tuple[dict, list[str]]:
    times, reads = [], []
    for _ in range(repeats):
        before = handler_reads(index)
        started = time.perf_counter()
        hits = index.bm25_search(query, SearchFilter(), K)
        times.append((time.perf_counter() - started) * 1000)
        reads.append(handler_reads(index) - before)
    return {
        "p50_ms": round(statistics.median(times), 1),
        "rows_read": min(reads),
    }, [h.chunk_id for h in hits]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dsn", required=True, help="tidb://user:pw@host:port/db")
    parser.add_argument("--chunks", type=int, default=50_000)
    parser.add_argument("--words", type=int, default=120, help="words per chunk")
    parser.add_argument("--bounds", default="1000,10000", help="per-term bounds to measure")
    parser.add_argument("--repeats", type=int, default=3, help="timed searches per cell")
    parser.add_argument("--keep", action="store_true", help="keep the bench index")
    args = parser.parse_args(argv)

    chunks = synthetic_chunks(args.chunks, args.words)
    report: dict = {"chunks": args.chunks, "words_per_chunk": args.words, "k": K}
    with tempfile.TemporaryDirectory() as staging:
        store, loaded = open_fresh(args.dsn, "load_data", Path(staging))
        report["server"] = store.version
        report["load"] = measure_load(loaded, chunks, unit_vectors(args.chunks))
        print("loaded", report["load"], file=sys.stderr, flush=True)
        bounds = [UNBOUNDED] + [int(b) for b in args.bounds.split(",")]
        handles = {}
        for bound in bounds:
            settings = Settings(staging_dir=Path(staging), tidb_bm25_postings_per_term=bound)
            handles[bound] = TiDBStore.from_url(args.dsn, settings).open_index(loaded.name)
        report["search"] = {}
        for label, query in QUERIES.items():
            row: dict = {"query": query}
            full, full_ids = measure(handles[UNBOUNDED], query, args.repeats)
            row["unbounded"] = full
            for bound in bounds[1:]:
                cell, ids = measure(handles[bound], query, args.repeats)
                cell["kept"] = round(len(set(ids) & set(full_ids)) / max(len(full_ids), 1), 2)
                row[str(bound)] = cell
            report["search"][label] = row
            print(label, row, file=sys.stderr, flush=True)
        for handle in handles.values():
            handle.close()
        loaded.close()
        if not args.keep:
            store.drop_index(loaded.name)
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
