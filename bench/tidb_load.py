"""Measure the TiDB store: load throughput of both load methods, and search latency.

    source .ci/mariadb.sh && start_private_mariadb
    .venv/bin/python bench/tidb_load.py --dsn "$RAG_TEST_MYSQL_DSN" [--chunks 100000]
        [--words 120] [--queries 5] [--search-chunks N]

Load: synthetic chunks (Zipf-like words, 384-d unit vectors), applied through
`TiDBIndex.apply` in batches of 256 documents of 10 chunks, once with multi-row INSERT and
once with LOAD DATA LOCAL INFILE, each into a fresh index. Rows/s counts chunk rows (with
their vectors) and, separately, all rows written (chunks + postings + documents).
Search: p50/max latency at k=50 of hybrid_search (one statement: vector + BM25 + RRF),
bm25_search, and an exact filtered vector_search, over the first --search-chunks chunks of
the INSERT-loaded index (default: all of them).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from chunkers.model import Chunk  # noqa: E402
from core.settings import Settings  # noqa: E402
from core.store.contract import LoadBatch  # noqa: E402
from core.store.filters import SearchFilter  # noqa: E402
from core.store.tidb.store import TiDBIndex, TiDBStore  # noqa: E402
from loaders.arrow_tables import chunks_to_table, documents_to_table  # noqa: E402

DIM = 384
CHUNKS_PER_DOC = 10
DOCS_PER_BATCH = 256
WORDS = [
    "view", "state", "binding", "navigation", "stack", "list", "row", "section", "model",
    "data", "async", "await", "task", "actor", "main", "thread", "request", "response",
    "session", "cache", "image", "text", "button", "NavigationStack", "URLSession",
    "ObservableObject", "snake_case_value", "HTTP2Client", "Codable", "JSONDecoder",
]  # fmt: skip
DOMAINS = ["ios", "web", "python", "general"]
SOURCES = ["apple_docs", "wwdc", "user_codebase", "swift_forums"]
FRAMEWORKS = ["SwiftUI", "UIKit", "Foundation", "Combine", "MapKit"]
QUERIES = ["navigation stack view", "async await task actor", "url session request cache"]


def vocabulary(size: int = 30_000) -> tuple[list[str], list[float]]:
    """The listed words plus made-up ones, with Zipf-like frequencies as in real text."""
    words = WORDS + [f"term{i}" for i in range(size - len(WORDS))]
    cumulative, total = [], 0.0
    for rank in range(1, len(words) + 1):
        total += 1.0 / rank
        cumulative.append(total)
    return words, cumulative


def synthetic_chunks(count: int, words: int, seed: int = 1) -> list[Chunk]:
    rng = random.Random(seed)
    vocab, cumulative = vocabulary()
    return [
        Chunk(
            chunk_id=f"c{i:07d}",
            doc_id=f"d{i // CHUNKS_PER_DOC:06d}",
            chunk_index=i % CHUNKS_PER_DOC,
            content=" ".join(rng.choices(vocab, cum_weights=cumulative, k=words)),
            context=f"Framework > Symbol{i % 97}",
            chunk_type="api_doc",
            language="markdown",
            source=rng.choice(SOURCES),
            domain=rng.choice(DOMAINS),
            token_count=words,
            content_hash=f"h{i}",
            ios_version_min_int=rng.choice([None, 150000, 160000, 170000]),
            deprecated=rng.random() < 0.1,
            framework_tags=rng.sample(FRAMEWORKS, rng.randint(0, 2)),
            last_verified="2024-05-01",
        )
        for i in range(count)
    ]


def unit_vectors(count: int, seed: int = 2) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=(count, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def batches(chunks: list[Chunk], vectors: np.ndarray):
    per_batch = DOCS_PER_BATCH * CHUNKS_PER_DOC
    for start in range(0, len(chunks), per_batch):
        part = chunks[start : start + per_batch]
        doc_ids = list(dict.fromkeys(c.doc_id for c in part))
        docs = documents_to_table(
            [
                {"doc_id": d, "content_hash": f"{d}-v1", "last_verified": "2024-05-01"}
                for d in doc_ids
            ]
        )
        yield LoadBatch(docs, chunks_to_table(part), vectors[start : start + len(part)])


def open_fresh(dsn: str, method: str, staging: Path) -> tuple[TiDBStore, TiDBIndex]:
    store = TiDBStore.from_url(dsn, Settings(staging_dir=staging, tidb_load_method=method))
    index = store.open_index(f"bench_{method}_{uuid.uuid4().hex[:6]}", create=True)
    index.bind_model("bench-model", DIM)
    return store, index


def measure_load(index: TiDBIndex, chunks: list[Chunk], vectors: np.ndarray) -> dict:
    started = time.perf_counter()
    for batch in batches(chunks, vectors):
        index.apply(batch)
    seconds = time.perf_counter() - started
    stats = index.stats()
    with index._conn.cursor() as cur:  # the bench may look inside: postings written
        cur.execute(f"SELECT COUNT(*) FROM {index.tables.names()['postings']}")
        postings = int(cur.fetchone()[0])
    total_rows = stats["chunks"] + postings + stats["documents"]
    return {
        "chunks": stats["chunks"],
        "postings": postings,
        "seconds": round(seconds, 1),
        "chunks_per_s": round(stats["chunks"] / seconds),
        "rows_per_s": round(total_rows / seconds),
    }


def latency(run, repeats: int) -> dict:
    times = []
    for i in range(repeats):
        started = time.perf_counter()
        run(i)
        times.append((time.perf_counter() - started) * 1000)
    return {"p50_ms": round(statistics.median(times), 1), "max_ms": round(max(times), 1)}


def measure_search(index: TiDBIndex, repeats: int) -> dict:
    queries = unit_vectors(repeats, seed=9)
    filt = SearchFilter(domains=("ios", "general"), ios_version_int=170000)
    return {
        "hybrid_search": latency(
            lambda i: index.hybrid_search(queries[i], QUERIES[i % 3], filt, 50), repeats
        ),
        "bm25_search": latency(lambda i: index.bm25_search(QUERIES[i % 3], filt, 50), repeats),
        "vector_search_exact": latency(
            lambda i: index.vector_search(queries[i], filt, 50), repeats
        ),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dsn", required=True, help="tidb://user:pw@host:port/db")
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--words", type=int, default=120, help="words per chunk")
    parser.add_argument("--queries", type=int, default=5, help="timed searches per kind")
    parser.add_argument("--search-chunks", type=int, help="index size for search latency")
    parser.add_argument("--methods", default="insert,load_data")
    parser.add_argument("--keep", action="store_true", help="keep the bench indexes")
    args = parser.parse_args(argv)

    chunks = synthetic_chunks(args.chunks, args.words)
    vectors = unit_vectors(args.chunks)
    report: dict = {"chunks": args.chunks, "words_per_chunk": args.words, "load": {}}
    with tempfile.TemporaryDirectory() as staging:
        opened = []
        for method in args.methods.split(","):
            store, index = open_fresh(args.dsn, method, Path(staging))
            opened.append((store, index))
            report["server"] = store.version
            report["load"][method] = measure_load(index, chunks, vectors)
            print(method, report["load"][method], file=sys.stderr, flush=True)
        store, index = opened[0]
        search_chunks = args.search_chunks or args.chunks
        if search_chunks < args.chunks:
            _, index = open_fresh(args.dsn, "insert", Path(staging))
            opened.append((store, index))
            measure_load(index, chunks[:search_chunks], vectors[:search_chunks])
        report["search_chunks"] = search_chunks
        report["search"] = measure_search(index, args.queries)
        if not args.keep:
            for store, index in opened:
                index.close()
                store.drop_index(index.name)
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
