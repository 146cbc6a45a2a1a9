"""The vector phase spread over workers: plan shards, run them on an executor, load each
exactly once.

The index's pending chunks are cut into shards (loaders/shards.py) and sent to an executor
(loaders/executors/). Loads cannot duplicate or lose a chunk:
- SQLite: the flow's process is the one writer. It takes results as they complete and writes
  each shard's vectors with its done-record in one transaction; workers never open the file.
- TiDB: each worker writes its own shard the same way (loaders/executors/worker.py).
- Either way `put_vectors` writes a vector only to a chunk that still holds the text it was
  computed from and has none, so a shard run twice (a worker that died after its commit)
  writes nothing twice, and a chunk changed meanwhile is left pending.
The embedding cache (core/embedding/cache.py) works as in the local phase: before planning,
every pending chunk whose text it holds gets that vector here (no shard embeds it again), and
each shard's vectors that come back to this process go into it.
A shard whose worker died or failed is run again up to `vector_shard_attempts` times, then
recorded failed with its error; the run goes on with the others, and its chunks stay pending,
so the next `embed` (which recomputes the pending set) retries them. Each shard's timings,
attempts and errors go into the run summary, as worker logs never reach Prefect's UI.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from chunkers.embedding_text import embedding_text
from core.embedding.base import Embedder
from core.embedding.cache import EmbeddingCache, vector_identity
from core.embedding.identity import model_identity
from core.progress import Progress
from core.settings import Settings
from core.store.contract import IndexStore, ShardMark
from core.store.location import StoreLocation
from core.tokens import TokenCounter, TokenizerNotFound
from loaders.executors import ShardExecutor
from loaders.executors.worker import ShardOutcome, ShardTask
from loaders.hold import HoldPoints
from loaders.shards import clear_spool, plan_shards, read_chunks, read_texts, remove_files
from loaders.vectors import VectorPhase, pending_count, usable_rows

_LOG = logging.getLogger("rag.ingest")


def embed_sharded(
    index: IndexStore,
    embedder: Embedder,
    executor: ShardExecutor,
    settings: Settings,
    store: str | None,
    holds: HoldPoints | None = None,
    cache: EmbeddingCache | None = None,
) -> VectorPhase:
    """Embed every pending chunk of `index` (in `store`, as the run named it) on `executor`'s
    workers; the index's model must be `embedder`'s (bound by the caller). The hold point
    `vectors:n` comes before the outcome of the n-th shard (0-based) is loaded."""
    started = time.perf_counter()
    phase = VectorPhase()
    phase.pending_before, _ = pending_count(index)
    phase.executor = executor.name
    identity = vector_identity(embedder.model_id, getattr(embedder, "precision", "fp32"))
    if phase.pending_before and cache is not None:
        with _timed(phase, "cache"):
            _from_cache(index, cache, identity, embedder.dim, settings.vector_page_chunks, phase)
    if not pending_count(index)[0]:
        phase.pending_after, phase.chunks = pending_count(index)
        phase.seconds = round(time.perf_counter() - started, 3)
        return phase
    spool = settings.vector_spool_dir
    clear_spool(spool, index.name)
    with _timed(phase, "plan"):
        shards = plan_shards(
            index,
            identity,
            spool,
            shard_tokens=settings.vector_shard_tokens,
            count_tokens=_token_counter(embedder),
            page_chunks=settings.vector_page_chunks,
        )
    # Workers write a TiDB index themselves; an SQLite file has this process as its writer.
    remote = StoreLocation.of(store, settings).is_remote
    tasks = [
        ShardTask(s, settings, model_identity(embedder), (store, index.name) if remote else None)
        for s in shards
    ]
    progress = Progress(sum(s.chunks for s in shards), "embed shards", log=_LOG, unit="chunks")
    with _timed(phase, "shards"):
        for number, outcome in enumerate(executor.run(tasks, embedder)):
            if holds is not None:
                holds.reached("vectors", number)
            _settle(index, outcome, phase)
            if cache is not None and outcome.ok and outcome.vectors is not None:
                _keep(cache, identity, outcome)
            remove_files(outcome.shard)
            progress.advance(outcome.shard.chunks)
    progress.done()
    clear_spool(spool, index.name)
    phase.pending_after, phase.chunks = pending_count(index)
    phase.seconds = round(time.perf_counter() - started, 3)
    return phase


def shards_summary(phase: VectorPhase) -> dict[str, Any]:
    """The run summary's account of a sharded phase."""
    return {
        "executor": phase.executor,
        "shards": len(phase.shard_reports),
        "failed": phase.shards_failed,
        "resubmitted": phase.resubmitted,
        "timings": dict(phase.timings),
        "reports": list(phase.shard_reports),
    }


def _settle(index: IndexStore, outcome: ShardOutcome, phase: VectorPhase) -> None:
    """Load or record one shard's outcome and count it."""
    mark = ShardMark(outcome.shard.shard_id, outcome.attempts)
    phase.shard_reports.append(outcome.report())
    phase.resubmitted += max(0, outcome.attempts - 1)
    if not outcome.ok:
        phase.shards_failed += 1
        index.record_shard_failure(mark, outcome.error or "failed")
        _LOG.warning("shard %s failed: %s", mark.shard_id[:12], outcome.error)
        return
    phase.embedded += outcome.embedded
    if outcome.vectors is None:  # the worker wrote it (TiDB)
        written, unusable = outcome.written or 0, outcome.unusable
        kept = outcome.shard.chunks - len(unusable)
    else:
        chunks = read_chunks(outcome.shard)
        rows = chunks.vectors_for(outcome.keys, outcome.vectors)
        ok = usable_rows(rows)
        written = index.put_vectors(
            [c for c, good in zip(chunks.chunk_ids, ok, strict=True) if good],
            [h for h, good in zip(chunks.content_hashes, ok, strict=True) if good],
            rows[ok],
            shard=mark,
        )
        unusable = [
            (d, c)
            for d, c, good in zip(chunks.doc_ids, chunks.chunk_ids, ok, strict=True)
            if not good
        ]
        kept = int(ok.sum())
    phase.written += written
    phase.stale += kept - written
    for doc_id, chunk_id in unusable:
        phase.unusable.setdefault(doc_id, []).append(chunk_id)


def _from_cache(
    index: IndexStore,
    cache: EmbeddingCache,
    identity: str,
    dim: int,
    page_chunks: int,
    phase: VectorPhase,
) -> None:
    """Give each pending chunk whose text the cache holds its cached vector, a page per
    transaction."""
    after = ""
    while page := index.pending_vectors(after, page_chunks):
        after = page[-1].chunk_id
        texts = [embedding_text(p.context, p.content, p.language) for p in page]
        found, _ = cache.get_many(identity, texts)
        # A vector of another dimension was cached under a reused model id: a miss.
        hits = [i for i in sorted(found) if found[i].shape[0] == dim]
        if not hits:
            continue
        rows = np.stack([found[i] for i in hits]).astype(np.float32)
        ok = usable_rows(rows)
        kept = [i for i, good in zip(hits, ok, strict=True) if good]
        written = index.put_vectors(
            [page[i].chunk_id for i in kept], [page[i].content_hash for i in kept], rows[ok]
        )
        phase.cache_hits += len(kept)
        phase.written += written


def _keep(cache: EmbeddingCache, identity: str, outcome: ShardOutcome) -> None:
    """A shard's vectors into the cache, under the texts they were computed from."""
    keys, texts = read_texts(outcome.shard)
    text_of = dict(zip(keys, texts, strict=True))
    assert outcome.vectors is not None
    cache.put_many(identity, [text_of[k] for k in outcome.keys], outcome.vectors)


def _token_counter(embedder: Embedder) -> Callable[[list[str]], list[int]]:
    """The model's own token counts, or four characters a token for a model without a local
    tokenizer (an endpoint's): a shard's size only has to be about right."""
    model_dir = getattr(embedder, "model_dir", None)
    if model_dir is not None:
        try:
            return TokenCounter(Path(model_dir) / "tokenizer.json").count_many
        except TokenizerNotFound:
            pass
    return lambda texts: [len(t) // 4 + 1 for t in texts]


class _timed:
    def __init__(self, phase: VectorPhase, name: str) -> None:
        self.phase, self.name = phase, name

    def __enter__(self) -> None:
        self.started = time.perf_counter()

    def __exit__(self, *exc: object) -> None:
        self.phase.timings[self.name] = round(time.perf_counter() - self.started, 3)
