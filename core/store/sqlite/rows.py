"""Load batches (Arrow tables) as the rows and columns of the SQLite statements."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa

from core.store.contract import CHUNK_SCHEMA, LIST_COLUMNS, StoreError

_DOCUMENT_COLUMNS = ("doc_id", "source_path", "content_hash", "mtime", "last_verified", "metadata")


def document_rows(table: pa.Table) -> list[dict[str, Any]]:
    names = set(table.column_names)
    missing = [c for c in ("doc_id", "content_hash") if c not in names]
    if missing:
        raise StoreError(f"documents table lacks columns {missing}")
    n = table.num_rows
    cols = {c: table.column(c).to_pylist() if c in names else [None] * n for c in _DOCUMENT_COLUMNS}
    indexed_at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    rows = []
    for i in range(n):
        row = {c: cols[c][i] for c in _DOCUMENT_COLUMNS}
        row["indexed_at"] = indexed_at
        if row["metadata"] is not None and not isinstance(row["metadata"], str):
            row["metadata"] = json.dumps(row["metadata"], ensure_ascii=False, default=str)
        rows.append(row)
    return rows


def chunk_columns(table: pa.Table) -> dict[str, list[Any]]:
    """The columns of insert_chunk.sql (after its id), in CHUNK_SCHEMA order, as lists."""
    missing = [c for c in CHUNK_SCHEMA.names if c not in table.column_names]
    if missing:
        raise StoreError(f"chunks table lacks columns {missing}")
    cols = {name: table.column(name).to_pylist() for name in CHUNK_SCHEMA.names}
    for name in LIST_COLUMNS:
        cols[name] = _json_lists(cols[name])
    cols["deprecated"] = [bool(v) for v in cols["deprecated"]]
    return cols


def _json_lists(values: list[list[str] | None]) -> list[str]:
    """JSON arrays of the values; tag and import lists repeat a lot, so each distinct one
    is encoded once."""
    encoded: dict[tuple[str, ...], str] = {}
    out = []
    for value in values:
        key = tuple(value) if value else ()
        text = encoded.get(key)
        if text is None:
            text = encoded[key] = json.dumps(list(key), ensure_ascii=False)
        out.append(text)
    return out


def check_chunk_docs(chunk_ids: list[str], chunk_docs: list[str], doc_ids: set[str]) -> None:
    for chunk_id, doc_id in zip(chunk_ids, chunk_docs, strict=True):
        if doc_id not in doc_ids:
            raise StoreError(
                f"chunk {chunk_id!r} belongs to document {doc_id!r}, "
                "which is not in the batch's documents"
            )
