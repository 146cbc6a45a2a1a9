"""Arrow tables in the store schemas (CHUNK_SCHEMA, DOCUMENT_SCHEMA) from Python records.

Built column by column: one `pa.array` per column converts in C, where rows-of-dicts would
build and walk a dict per chunk.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from chunkers.model import Chunk
from core.store.contract import CHUNK_SCHEMA, DOCUMENT_SCHEMA, REFERENCE_SCHEMA

# Columns whose Python value is a dict (or list) that the schema carries as JSON text.
_JSON_COLUMNS = frozenset({"platforms", "metadata"})


def to_json(value: Any) -> str | None:
    """Stable JSON text (sorted keys, so equal metadata compares equal), None stays None."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def _column(name: str, values: list[Any], type_: pa.DataType) -> pa.Array:
    if name in _JSON_COLUMNS:
        values = [to_json(v) for v in values]
    try:
        return pa.array(values, type=type_)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError) as exc:
        raise ValueError(f"column {name!r} does not fit {type_}: {exc}") from exc


def chunks_to_table(chunks: Sequence[Chunk]) -> pa.Table:
    """Chunks as a table in CHUNK_SCHEMA (platforms and metadata JSON-encoded)."""
    arrays = [_column(f.name, [getattr(c, f.name) for c in chunks], f.type) for f in CHUNK_SCHEMA]
    return pa.Table.from_arrays(arrays, schema=CHUNK_SCHEMA)


def references_to_table(chunks: Sequence[Chunk]) -> pa.Table:
    """What the chunks' code declares and uses, as a table in REFERENCE_SCHEMA."""
    rows = [
        (c.chunk_id, c.doc_id, r.name, r.role, r.kind, r.line, r.end_line, r.scope, r.qualifier)
        for c in chunks
        for r in c.references
    ]
    columns = list(zip(*rows, strict=True)) if rows else [()] * len(REFERENCE_SCHEMA)
    arrays = [pa.array(list(v), f.type) for v, f in zip(columns, REFERENCE_SCHEMA, strict=True)]
    return pa.Table.from_arrays(arrays, schema=REFERENCE_SCHEMA)


def documents_to_table(rows: Sequence[dict[str, Any]]) -> pa.Table:
    """Document rows (dicts keyed by DOCUMENT_SCHEMA names; missing keys are null, a dict
    metadata is JSON-encoded) as a table in DOCUMENT_SCHEMA."""
    arrays = [_column(f.name, [r.get(f.name) for r in rows], f.type) for f in DOCUMENT_SCHEMA]
    return pa.Table.from_arrays(arrays, schema=DOCUMENT_SCHEMA)


def empty_chunks() -> pa.Table:
    return CHUNK_SCHEMA.empty_table()
