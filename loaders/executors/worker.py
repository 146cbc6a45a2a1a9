"""What a worker does with one shard, whichever executor sent it there.

The model is loaded once per worker process and kept (`_MODELS`), with its share of the
host's cores as ONNX Runtime threads, as Ray Data's actor pools and Beam's RunInference keep
theirs: a shard then costs its embedding only. Before embedding, the worker's model identity
(core/embedding/identity.py) is compared with the index's: a worker set up differently is
refused and its shard fails there, so its vectors never reach the index.

The worker returns its vectors keyed by content (the shard's content keys, in its own
order), or, when the index is on TiDB (`ShardTask.store`), writes them itself, with the
shard's done-record in the same transaction, and returns what it wrote. A worker never
opens an SQLite index: that file has one writer, the flow's process.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from core.embedding.base import Embedder
from core.embedding.identity import ModelIdentity, model_identity
from core.embedding.runtimes import KeptEmbedders
from core.settings import Settings
from core.store.contract import ShardMark
from core.store.open import open_store
from loaders.shards import Shard, read_chunks, read_texts
from loaders.vectors import usable_rows

_MODELS = KeptEmbedders()


class IdentityRefused(RuntimeError):
    """The worker's model is not the index's: its vectors must not be mixed in."""


@dataclass(frozen=True)
class ShardTask:
    """One shard's work as it travels to a worker: a few hundred bytes whatever the shard
    holds (the texts are in its file)."""

    shard: Shard
    settings: Settings
    identity: ModelIdentity
    # (store location, index name) of a TiDB index the worker writes to itself; None: the
    # vectors come back to the flow's process, the one writer of an SQLite file.
    store: tuple[str | None, str] | None = None


@dataclass
class ShardOutcome:
    """What became of one shard."""

    shard: Shard
    ok: bool
    keys: list[str] = field(default_factory=list)
    vectors: np.ndarray | None = None  # row i is keys[i]'s; None when the worker wrote them
    written: int | None = None  # vectors the worker wrote itself (TiDB)
    unusable: list[tuple[str, str]] = field(default_factory=list)  # (doc, chunk), TiDB only
    error: str | None = None
    attempts: int = 1
    worker: str = ""  # host:pid of the worker of the last attempt
    seconds: float = 0.0  # the last attempt's, on its worker
    embedded: int = 0  # texts embedded

    def report(self) -> dict[str, object]:
        """The shard's line in the run summary (worker logs do not reach Prefect's UI)."""
        return {
            "shard": self.shard.shard_id[:12],
            "chunks": self.shard.chunks,
            "tokens": self.shard.tokens,
            "ok": self.ok,
            "attempts": self.attempts,
            "worker": self.worker,
            "seconds": round(self.seconds, 3),
            **({"error": self.error} if self.error else {}),
        }


def embed_shard(task: ShardTask, *, threads: int = 0, attempt: int = 1) -> ShardOutcome:
    """Embed one shard on this worker with `threads` ONNX threads (0: the runtime's
    default), and write it when its index is on TiDB."""
    started = time.perf_counter()
    embedder = worker_embedder(task.settings.with_(embedding_threads=threads or None))
    mine = model_identity(embedder)
    if mine != task.identity:
        raise IdentityRefused(
            f"worker {where()} refused: its model differs from the index's "
            f"({'; '.join(mine.differences(task.identity))})"
        )
    return run_shard(task, embedder, attempt, where(), started, on_batch=_fault_hook(task.settings))


def run_shard(
    task: ShardTask,
    embedder: Embedder,
    attempt: int,
    worker: str,
    started: float,
    *,
    on_batch: Callable[..., None] | None = None,
) -> ShardOutcome:
    """Embed the shard's texts with `embedder` (checked by the caller to be the index's
    model), and write them when its index is on TiDB."""
    keys, texts = read_texts(task.shard)
    vectors = embedder.embed_documents(texts, on_batch=on_batch)
    outcome = ShardOutcome(task.shard, True, keys, vectors, worker=worker, embedded=len(texts))
    if task.store is not None:
        outcome.written, outcome.unusable = write_shard(task, keys, vectors, attempt)
        outcome.vectors, outcome.keys = None, []
    outcome.seconds = time.perf_counter() - started
    return outcome


def write_shard(
    task: ShardTask, keys: list[str], vectors: np.ndarray, attempt: int
) -> tuple[int, list[tuple[str, str]]]:
    """The shard's vectors and done-record in one transaction of its TiDB index: (written,
    the (doc, chunk) pairs whose vector is unusable)."""
    assert task.store is not None
    location, name = task.store
    chunks = read_chunks(task.shard)
    rows = chunks.vectors_for(keys, vectors)
    ok = usable_rows(rows)
    store = open_store(location, task.settings)
    index = store.open_index(name, write=True)
    try:
        written = index.put_vectors(
            [c for c, good in zip(chunks.chunk_ids, ok, strict=True) if good],
            [h for h, good in zip(chunks.content_hashes, ok, strict=True) if good],
            rows[ok],
            shard=ShardMark(task.shard.shard_id, attempt),
        )
    finally:
        index.close()
    unusable = [
        (d, c) for d, c, good in zip(chunks.doc_ids, chunks.chunk_ids, ok, strict=True) if not good
    ]
    return written, unusable


def worker_embedder(settings: Settings) -> Embedder:
    """The process's model for these settings, loaded on first use and kept."""
    return _MODELS.get(settings)


def share_of_cores(workers_on_host: int) -> int:
    """ONNX threads for one of `workers_on_host` worker processes on this host."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # macOS has no affinity masks
        cores = os.cpu_count() or 1
    return max(1, cores // max(1, workers_on_host))


def where() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _fault_hook(settings: Settings) -> Callable[..., None] | None:
    """RAG_FAULT_KILL_WORKER's callback: after the first model batch of the first shard to
    get there, this process dies as a killed worker does (no cleanup, no reply)."""
    marker = settings.fault_kill_worker
    if marker is None:
        return None

    def after_batch(*_: object) -> None:
        try:
            fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return
        os.write(fd, where().encode())
        os.close(fd)
        os._exit(17)

    return after_batch
