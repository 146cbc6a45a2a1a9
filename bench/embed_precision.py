"""Embedding in two precisions, alternated in one run (bench/ingest.py --only embed).

On a shared 2-core box throughput moves by tens of percent within minutes, so the fp32
reference and the chosen precision take turns on the same groups of texts, and only their
ratio within the run is a claim. Three figures each: tokens/s on the bench's real chunks,
texts/s on the SciFact corpus (chunked as `python -m query.eval` chunks it), and the latency
of embedding one query (SciFact's queries, one at a time, as a search does).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from chunkers.embedding_text import embedding_text
from chunkers.parallel import ChunkSizes, chunk_documents
from core.embedding.base import BatchedEmbedder, EmbedStats
from core.settings import Settings
from query.eval.beir import load_beir
from query.eval.index import to_document

SCIFACT = Path("/work/shared/data/scifact")


def alternated(
    embedders: dict[str, BatchedEmbedder],
    ordered: list[str],
    group: int,
    between: Callable[[], None] = lambda: None,
) -> dict[str, EmbedStats]:
    """Each embedder embeds each group of `ordered` in turn; `between` runs before each
    group (the ceiling's sample). Texts are pre-sorted by length, so each group's batches are
    exactly those of one big call."""
    stats = {name: EmbedStats() for name in embedders}
    for start in range(0, len(ordered), group):
        between()
        for name, embedder in embedders.items():
            embedder.embed_documents(ordered[start : start + group])
            stats[name].add(embedder.last_stats)
    between()
    return stats


def scifact_texts(settings: Settings, limit: int) -> list[str]:
    """The SciFact corpus's chunk texts, as the eval embeds them (first `limit` documents;
    0 = all 5,183)."""
    data = load_beir(SCIFACT, "train")
    items = list(data.corpus.items())[: limit or None]
    docs = [to_document(d, t, x) for d, (t, x) in items]
    chunks = [
        c for r in chunk_documents(docs, ChunkSizes.from_settings(settings)) for c in r.chunks
    ]
    return [embedding_text(c.context, c.content, c.language) for c in chunks]


def corpus_rates(embedders: dict[str, BatchedEmbedder], texts: list[str]) -> dict[str, Any]:
    """Texts/s over the whole (or limited) SciFact corpus, alternated by groups of 256."""
    lengths = next(iter(embedders.values()))._lengths(texts)
    ordered = [texts[i] for i in sorted(range(len(texts)), key=lambda i: -lengths[i])]
    stats = alternated(embedders, ordered, 256)
    return {
        "chunks": len(texts),
        **{f"{name}_texts_per_s": round(s.texts_per_s, 2) for name, s in stats.items()},
        **{f"{name}_seconds": round(s.seconds, 1) for name, s in stats.items()},
    }


def query_latency(
    embedders: dict[str, BatchedEmbedder], queries: list[str], rounds: int = 3
) -> dict[str, Any]:
    """Median and 90th percentile ms of embedding one query, the embedders taking turns
    query by query."""
    times: dict[str, list[float]] = {name: [] for name in embedders}
    for embedder in embedders.values():
        embedder.embed_queries(queries[:2])  # warm-up
    for _ in range(rounds):
        for query in queries:
            for name, embedder in embedders.items():
                started = time.perf_counter()
                embedder.embed_queries([query])
                times[name].append((time.perf_counter() - started) * 1e3)
    out: dict[str, Any] = {"queries": len(queries) * rounds}
    for name, values in times.items():
        values.sort()
        out[f"{name}_p50_ms"] = round(statistics.median(values), 2)
        out[f"{name}_p90_ms"] = round(values[int(0.9 * (len(values) - 1))], 2)
    return out


def scifact_queries(count: int) -> list[str]:
    data = load_beir(SCIFACT, "train")
    return list(data.queries.values())[:count]
