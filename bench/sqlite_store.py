"""Measure the embedded SQLite store: load throughput and search latency.

    .venv/bin/python bench/sqlite_store.py [--chunks 20000] [--search-chunks 100000]

Load: synthetic chunks of ~300 tokens with 384-d vectors, applied in batches of 256
documents (as loaders.load does); chunks/s counts rows + vectors + FTS in one transaction
per batch. Search: p50/p95 of vector_search at k=50 over --search-chunks chunks, without and
with a metadata filter, plus BM25 on the load index.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from chunkers.model import Chunk  # noqa: E402
from core.store.contract import LoadBatch  # noqa: E402
from core.store.filters import SearchFilter  # noqa: E402
from core.store.sqlite.index import SQLiteIndex  # noqa: E402
from core.store.sqlite.store import SQLiteStore  # noqa: E402
from loaders.arrow_tables import chunks_to_table, documents_to_table  # noqa: E402

DIM = 384
CHUNKS_PER_DOC = 10
DOCS_PER_BATCH = 256
WORDS = [
    "the", "view", "state", "binding", "navigation", "stack", "list", "row", "section",
    "model", "data", "async", "await", "task", "actor", "main", "thread", "request",
    "response", "session", "cache", "image", "text", "button", "toggle", "picker", "sheet",
    "alert", "gesture", "animation", "layout", "frame", "padding", "color", "font",
    "environment", "object", "observable", "NavigationStack", "URLSession", "ObservableObject",
    "@MainActor", "snake_case_value", "HTTP2Client", "Codable", "JSONDecoder",
    "UIViewController", "SwiftUI", "Combine", "publisher", "subscriber", "sink",
]  # fmt: skip
DOMAINS = ["ios", "web", "python", "general"]
SOURCES = ["apple_docs", "wwdc", "user_codebase", "swift_forums"]
FRAMEWORKS = ["SwiftUI", "UIKit", "Foundation", "Combine", "MapKit"]


def vocabulary(size: int = 30_000) -> tuple[list[str], list[float]]:
    """The listed words plus made-up ones, with Zipf-like frequencies as in real text."""
    words = WORDS + [f"term{i}" for i in range(size - len(WORDS))]
    cumulative, total = [], 0.0
    for rank in range(1, len(words) + 1):
        total += 1.0 / rank
        cumulative.append(total)
    return words, cumulative


def synthetic_chunks(count: int, words: int, seed: int) -> list[Chunk]:
    rng = random.Random(seed)
    vocab, cumulative = vocabulary()
    out = []
    for i in range(count):
        content = " ".join(rng.choices(vocab, cum_weights=cumulative, k=words))
        out.append(
            Chunk(
                chunk_id=f"c{i:07d}",
                doc_id=f"d{i // CHUNKS_PER_DOC:06d}",
                chunk_index=i % CHUNKS_PER_DOC,
                content=content,
                context=f"Framework > Symbol{i % 97}",
                chunk_type="api_doc",
                language="markdown",
                source=rng.choice(SOURCES),
                domain=rng.choice(DOMAINS),
                # Not the tokenizer's count; packing trusts stored counts, so query benches
                # time that path (as with a real index) but their token totals are words.
                token_count=words,
                content_hash=f"h{i}",
                ios_version_min_int=rng.choice([None, 150000, 160000, 170000]),
                ios_version_max_int=rng.choice([None, None, 180000]),
                deprecated=rng.random() < 0.1,
                framework_tags=rng.sample(FRAMEWORKS, rng.randint(0, 2)),
                last_verified="2024-05-01",
            )
        )
    return out


def unit_vectors(count: int, seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal((count, DIM), dtype=np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def load(index: SQLiteIndex, chunks: list[Chunk], vectors: np.ndarray) -> tuple[float, float]:
    """(seconds building Arrow tables, seconds in apply)."""
    per_batch = CHUNKS_PER_DOC * DOCS_PER_BATCH
    build = apply = 0.0
    for start in range(0, len(chunks), per_batch):
        part = chunks[start : start + per_batch]
        t0 = time.perf_counter()
        doc_ids = list(dict.fromkeys(c.doc_id for c in part))
        docs = documents_to_table([{"doc_id": d, "content_hash": f"h{d}"} for d in doc_ids])
        batch = LoadBatch(docs, chunks_to_table(part), vectors[start : start + len(part)])
        t1 = time.perf_counter()
        index.apply(batch)
        t2 = time.perf_counter()
        build += t1 - t0
        apply += t2 - t1
    return build, apply


def latencies(fn, queries: list) -> tuple[float, float]:
    times = []
    for query in queries:
        t0 = time.perf_counter()
        fn(query)
        times.append((time.perf_counter() - t0) * 1000)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.95) - 1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=20_000)
    parser.add_argument("--words", type=int, default=230, help="~1.3 tokens per word")
    parser.add_argument("--search-chunks", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        store = SQLiteStore(tmp)
        index = store.open_index("load", create=True)
        index.bind_model("bench", DIM)
        chunks = synthetic_chunks(args.chunks, args.words, seed=1)
        build, apply = load(index, chunks, unit_vectors(len(chunks), seed=2))
        stats = index.stats()
        print(
            f"load: {len(chunks)} chunks x ~{int(args.words * 1.3)} tokens, {DIM}-d: "
            f"apply {apply:.2f}s = {len(chunks) / apply:,.0f} chunks/s "
            f"(+ Arrow build {build:.2f}s); file + WAL {stats['file_bytes'] / 1e6:.0f} MB"
        )
        texts = ["NavigationStack", "URLSession async request", "how to cache an image term500"]
        p50, p95 = latencies(
            lambda t: index.bm25_search(t, SearchFilter(), 50), texts * (args.queries // 3)
        )
        print(f"bm25 @ {len(chunks)}: p50 {p50:.1f} ms, p95 {p95:.1f} ms (k=50)")
        index.close()

        big = store.open_index("search", create=True)
        big.bind_model("bench", DIM)
        many = synthetic_chunks(args.search_chunks, 8, seed=3)
        t0 = time.perf_counter()
        load(big, many, unit_vectors(len(many), seed=4))
        print(f"built {len(many)}-chunk search index in {time.perf_counter() - t0:.1f}s")
        t0 = time.perf_counter()
        big.snapshot()
        print(f"first snapshot load: {(time.perf_counter() - t0) * 1000:.0f} ms")
        queries = list(unit_vectors(args.queries, seed=5))
        filters = {
            "no filter": SearchFilter(),
            "domain=ios, iOS 17": SearchFilter(domains=("ios",), ios_version_int=170000),
            "frameworks=MapKit": SearchFilter(frameworks_any=("MapKit",)),
        }
        for label, filt in filters.items():
            p50, p95 = latencies(lambda q, f=filt: big.vector_search(q, f, 50), queries)
            print(
                f"vector @ {len(many)} x {DIM}, k=50, {label}: p50 {p50:.1f} ms, p95 {p95:.1f} ms"
            )
        big.close()


if __name__ == "__main__":
    main()
