"""An ingest's vector phase: embed the chunks an index holds without a vector, page by page.

The lexical phase (loaders/ingest.py) loads chunks, the keyword index and the symbol tables
with no vectors, so a corpus answers keyword questions seconds after its chunks are made.
This phase then reads the pending chunks from the index itself (`pending_vectors`, in
chunk_id order), embeds each page through the embedding cache, and commits the page's
vectors in one transaction (`put_vectors`). Nothing is held in memory between runs: "chunked
but not embedded" is the index's own state, so a run killed at any moment is finished by the
next `ingest` or `rag-retrieve embed`, which embeds only what is still pending, and every
model batch computed before the kill comes back from the cache.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from chunkers.embedding_text import embedding_text
from core.embedding.base import Embedder
from core.embedding.cache import EmbeddingCache, embed_with_cache
from core.progress import Progress
from core.store.contract import IndexStore
from core.store.coverage import pending_of
from loaders.hold import HoldPoints

_LOG = logging.getLogger("rag.ingest")
SHOWN_CHUNKS = 3


@dataclass
class VectorPhase:
    """What one vector phase did. `unusable` maps a document to its chunks whose vector was
    all zeros or not finite: they stay keyword-only (pending), and the run names them."""

    pending_before: int = 0
    written: int = 0
    embedded: int = 0  # texts the model embedded
    cache_hits: int = 0  # chunks whose vector came from the embedding cache
    stale: int = 0  # chunks changed or deleted between their read and their write
    pending_after: int = 0
    chunks: int = 0  # chunks in the index at the end
    interrupted: bool = False  # stopped early for newer work (a watch's next change)
    seconds: float = 0.0
    unusable: dict[str, list[str]] = field(default_factory=dict)
    # Spread over workers (loaders/sharded.py): the executor, each shard's report, the
    # shards given up on, the runs of a shard beyond its first, and the phase's own stages.
    executor: str = "local"
    shard_reports: list[dict[str, object]] = field(default_factory=list)
    shards_failed: int = 0
    resubmitted: int = 0
    timings: dict[str, float] = field(default_factory=dict)


def pending_count(index: IndexStore) -> tuple[int, int]:
    """(chunks without a vector, chunks) of the index."""
    return pending_of(index.stats())


def embed_pending(
    index: IndexStore,
    embedder: Embedder,
    cache: EmbeddingCache | None,
    *,
    page_chunks: int,
    holds: HoldPoints | None = None,
    interrupted: Callable[[], bool] | None = None,
) -> VectorPhase:
    """Embed every chunk of `index` without a vector, `page_chunks` per commit. The index's
    model must be `embedder`'s (bound by the lexical phase or the caller). `interrupted` is
    asked after each model batch: when it says so the phase stops there, leaving the page
    uncommitted (its batches are in the cache, so resuming costs nothing), so that a
    watcher's next change is loaded within a batch rather than a page or a corpus."""
    started = time.perf_counter()
    phase = VectorPhase()
    phase.pending_before, _ = pending_count(index)
    progress = Progress(phase.pending_before, "embed pending chunks", log=_LOG, unit="chunks")
    after, number = "", 0
    while phase.pending_before:
        page = index.pending_vectors(after, page_chunks)
        if not page:
            break
        after = page[-1].chunk_id
        texts = [embedding_text(p.context, p.content, p.language) for p in page]
        try:
            vectors, hits, embedded = embed_with_cache(
                embedder, cache, texts, after_batch=_after_batch(holds, interrupted)
            )
        except _Interrupted:
            phase.interrupted = True
            break
        phase.cache_hits += hits
        phase.embedded += embedded
        usable = usable_rows(vectors)
        for chunk in (p for p, ok in zip(page, usable, strict=True) if not ok):
            phase.unusable.setdefault(chunk.doc_id, []).append(chunk.chunk_id)
        kept = [p for p, ok in zip(page, usable, strict=True) if ok]
        if holds is not None:
            holds.reached("vectors", number)
        written = index.put_vectors(
            [p.chunk_id for p in kept], [p.content_hash for p in kept], vectors[usable]
        )
        phase.written += written
        phase.stale += len(kept) - written
        number += 1
        progress.advance(len(page))
    progress.done()
    phase.pending_after, phase.chunks = pending_count(index)
    phase.seconds = round(time.perf_counter() - started, 3)
    return phase


class _Interrupted(Exception):
    """Raised out of a model batch's callback to stop the phase between two batches."""


def _after_batch(
    holds: HoldPoints | None, interrupted: Callable[[], bool] | None
) -> Callable[..., None] | None:
    if holds is None and interrupted is None:
        return None

    def after(*_: object) -> None:
        if holds is not None:
            holds.advance("embed")
        if interrupted is not None and interrupted():
            raise _Interrupted

    return after


def unusable_reason(chunk_ids: list[str]) -> str:
    """Why a document's chunks have no vector, for its reject."""
    shown = ", ".join(chunk_ids[:SHOWN_CHUNKS]) + (" ..." if len(chunk_ids) > SHOWN_CHUNKS else "")
    return (
        f"{len(chunk_ids)} chunk(s) embed to an all-zero or non-finite vector, which vector "
        f"search cannot rank ({shown}); the document is found by keyword search only"
    )


def usable_rows(vectors: np.ndarray) -> np.ndarray:
    """Rows a store can keep and cosine can rank: finite and not all zeros."""
    arr = np.asarray(vectors, dtype=np.float32)
    if not len(arr):
        return np.zeros(0, dtype=bool)
    return np.asarray(arr.any(axis=1) & np.isfinite(arr).all(axis=1), dtype=bool)
