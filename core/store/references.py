"""The references table of a load batch (core.store.contract.REFERENCE_SCHEMA) as the rows
both stores insert, checked the way chunks are: every row belongs to a chunk of the batch."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from core.store.contract import REFERENCE_SCHEMA, StoreError


def reference_rows(table: pa.Table, chunk_ids: list[str] | None = None) -> list[tuple[Any, ...]]:
    """Positional rows in REFERENCE_SCHEMA order; with `chunk_ids`, a row of any other chunk
    is an error (it would outlive its chunk, nothing would ever delete it)."""
    missing = [c for c in REFERENCE_SCHEMA.names if c not in table.column_names]
    if missing:
        raise StoreError(f"references table lacks columns {missing}")
    columns = [table.column(name).to_pylist() for name in REFERENCE_SCHEMA.names]
    rows = list(zip(*columns, strict=True))
    if chunk_ids is not None:
        known = set(chunk_ids)
        for row in rows:
            if row[0] not in known:
                raise StoreError(f"a reference names chunk {row[0]!r}, which is not in the batch")
    return rows


def rows_of_docs(rows: list[tuple[Any, ...]], doc_ids: set[str]) -> list[tuple[Any, ...]]:
    """The rows of these documents (REFERENCE_SCHEMA's doc_id is its second column)."""
    return [row for row in rows if row[1] in doc_ids]
