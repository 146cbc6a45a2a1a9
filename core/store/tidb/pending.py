"""Chunks loaded without a vector, and the vectors an ingest's vector phase gives them
(core.store.contract.IndexStore.pending_vectors / put_vectors), on a TiDB index.

A pending chunk's `embedding` is NULL: both search paths leave such rows out
(sql/tidb/search.sql), and the HNSW index takes each vector as it is written; TiDBIndex
compacts the TiFlash replica after vector writes as after loads, so new vectors are searched
through the index soon.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from core.store.contract import PendingChunk, ShardMark, StoreError
from core.store.tidb.load import vector_texts
from core.store.tidb.rows import normalised, refuse_zero_vectors


def pending_chunks(rows: list[tuple[Any, ...]]) -> list[PendingChunk]:
    """Rows of pending_vector_rows (sql/tidb/pending.sql)."""
    return [PendingChunk(*row) for row in rows]


def vector_updates(
    chunk_ids: list[str],
    content_hashes: list[str],
    vectors: np.ndarray,
    dim: int | None,
    index: str,
) -> list[tuple[str, str, str]]:
    """The parameters of put_pending_vector per chunk: checked (shape, no all-zero vector)
    and formatted before the transaction starts. `index` names the index in errors."""
    if len(chunk_ids) != len(content_hashes):
        raise ValueError(f"{len(chunk_ids)} chunk ids but {len(content_hashes)} hashes")
    if not chunk_ids:
        return []
    if dim is None:
        raise StoreError(f"index {index!r}: bind_model before writing vectors")
    shape = np.asarray(vectors).shape
    if shape != (len(chunk_ids), dim):
        raise StoreError(
            f"index {index!r}: expected vectors of shape ({len(chunk_ids)}, {dim}), got {shape}"
        )
    refuse_zero_vectors(chunk_ids, vectors)
    texts = vector_texts(normalised(vectors))
    return list(zip(texts, chunk_ids, content_hashes, strict=True))


# TEXT holds 64 KiB; an error longer than this is cut (its start says what failed).
_ERROR_CHARS = 8000


def done_record(shard: ShardMark, written: int) -> dict[str, Any]:
    """The parameters of record_shard_done (sql/tidb/pending.sql)."""
    return {"shard_id": shard.shard_id, "written": written, "attempts": shard.attempts}


def failure_record(shard: ShardMark, error: str) -> dict[str, Any]:
    """The parameters of record_shard_failed."""
    return {"shard_id": shard.shard_id, "attempts": shard.attempts, "error": error[:_ERROR_CHARS]}
