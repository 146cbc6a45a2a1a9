"""Rows between the store contract's Arrow tables / hits and the TiDB store's SQL."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pyarrow as pa

from core.store.contract import CHUNK_SCHEMA, Hit, StoreError
from core.store.tidb.load import PreparedRows


def normalised(vectors: np.ndarray) -> np.ndarray:
    out = np.array(vectors, dtype=np.float32, copy=True)
    norms = np.linalg.norm(out, axis=-1, keepdims=True)
    np.divide(out, norms, out=out, where=norms > 0)
    return out


def refuse_zero_vectors(chunk_ids: list[str], vectors: np.ndarray) -> None:
    """An all-zero vector has no direction: its cosine distance to anything is NULL in TiDB,
    so the chunk could never be found by vector search. Refused before anything is written,
    naming the chunks."""
    zero = ~np.asarray(vectors, dtype=np.float32).any(axis=-1)
    if zero.any():
        named = [chunk_ids[i] for i in np.flatnonzero(zero)]
        shown = ", ".join(repr(c) for c in named[:5]) + (" ..." if len(named) > 5 else "")
        raise ZeroVector(
            f"{len(named)} chunk(s) with an all-zero vector, which cosine search cannot "
            f"rank: {shown}"
        )


class ZeroVector(StoreError):
    """A batch holds chunks whose vector is all zeros."""


def vector_hits(rows: list[tuple[Any, ...]]) -> list[Hit]:
    return [Hit(chunk_id, 1.0 - float(distance)) for chunk_id, distance in rows]


def ranked(rows: list[tuple[Any, ...]], *, rank: int, score: int) -> list[Hit]:
    ranked = sorted((r for r in rows if r[rank] is not None), key=lambda r: r[rank])
    return [Hit(r[0], float(r[score])) for r in ranked]


def document_rows(table: pa.Table) -> list[dict[str, Any]]:
    names = set(table.column_names)
    missing = [c for c in ("doc_id", "content_hash") if c not in names]
    if missing:
        raise StoreError(f"documents table lacks columns {missing}")
    columns = ("doc_id", "source_path", "content_hash", "mtime", "last_verified", "metadata")
    cols = {
        c: table.column(c).to_pylist() if c in names else [None] * table.num_rows for c in columns
    }
    indexed_at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    rows = []
    for i in range(table.num_rows):
        row = {c: cols[c][i] for c in columns}
        row["indexed_at"] = indexed_at
        if row["metadata"] is not None and not isinstance(row["metadata"], str):
            row["metadata"] = json.dumps(row["metadata"], ensure_ascii=False, default=str)
        rows.append(row)
    return rows


def check_chunks(chunks: pa.Table, doc_ids: set[str]) -> None:
    missing = [c for c in CHUNK_SCHEMA.names if c not in chunks.column_names]
    if missing:
        raise StoreError(f"chunks table lacks columns {missing}")
    seen: set[str] = set()
    for chunk_id, doc_id in zip(
        chunks.column("chunk_id").to_pylist(), chunks.column("doc_id").to_pylist(), strict=True
    ):
        if doc_id not in doc_ids:
            raise StoreError(
                f"chunk {chunk_id!r} belongs to document {doc_id!r}, "
                "which is not in the batch's documents"
            )
        if chunk_id in seen:
            raise StoreError(f"chunk id {chunk_id!r} appears twice in the batch")
        seen.add(chunk_id)


def subset(
    rows: PreparedRows, chunk_doc_ids: list[str], docs: list[dict[str, Any]], group: set[str]
) -> PreparedRows:
    positions = [i for i, d in enumerate(chunk_doc_ids) if d in group]
    chunk_ids = {rows.chunks.column("chunk_id")[i].as_py() for i in positions}
    return PreparedRows(
        chunks=rows.chunks.take(pa.array(positions, pa.int64())),
        postings=[p for p in rows.postings if p[1] in chunk_ids],
        documents=[r for r, d in zip(rows.documents, docs, strict=True) if d["doc_id"] in group],
        chunk_bytes=[rows.chunk_bytes[i] for i in positions],
        total_len=sum(rows.chunks.column("body_len")[i].as_py() for i in positions),
    )
