"""Rows of a LoadBatch in the TiDB tables' shape, grouped under TiDB's size limits, and the two
ways of sending them: multi-row INSERT or LOAD DATA LOCAL INFILE from a TSV file.

Which one the store uses is `Settings.tidb_load_method`; bench/tidb_load.py measures both.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from enum import Enum
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa
import pymysql

from core.store.contract import CHUNK_SCHEMA, LIST_COLUMNS, StoreError
from core.store.text_key import text_key
from core.store.tidb.bm25 import ChunkTerms, chunk_terms, posting_rows
from core.store.tidb.conn import error_code
from core.store.tidb.sql import Tables, render

# 1148 "command not allowed" (MySQL/TiDB, local_infile off), 3948 "loading local data is
# disabled" (MySQL 8), 4166 the same from MariaDB, 2068 "file request rejected" (client).
LOCAL_INFILE_REFUSED = frozenset({1148, 3948, 4166, 2068})
# TiDB: txn-entry-size-limit 6 MiB per row, txn-total-size-limit 100 MiB per transaction.
# Budgets stay below them: our estimate counts text only, not index entries or encoding.
MAX_ROW_BYTES = 6 * 1024 * 1024 - 64 * 1024
MAX_TXN_BYTES = 48 * 1024 * 1024
CHUNK_COLUMNS = (*CHUNK_SCHEMA.names, "text_key", "body_len", "body", "embedding")
POSTING_COLUMNS = ("term", "chunk_id", "doc_id", "tf", "doc_len")
DOCUMENT_COLUMNS = (
    "doc_id",
    "source_path",
    "content_hash",
    "mtime",
    "indexed_at",
    "last_verified",
    "metadata",
)


log = logging.getLogger(__name__)


class LoadMethod(Enum):
    INSERT = "insert"
    LOAD_DATA = "load_data"


def vector_texts(vectors: np.ndarray) -> list[str]:
    """'[x,y,...]' per row: TiDB's vector literal and valid JSON. Float32 values in their
    shortest round-trip form (polars formats in Rust, ~50x faster than Python repr)."""
    if len(vectors) == 0:
        return []
    arr = np.ascontiguousarray(vectors, dtype=np.float32)
    if not np.isfinite(arr).all():
        raise StoreError("vectors contain NaN or infinity, which TiDB cannot store")
    text = (
        pl.Series("v", arr)
        .cast(pl.List(pl.Float32))
        .list.eval(pl.element().cast(pl.String))
        .list.join(",")
    )
    return ("[" + text + "]").to_list()


@dataclass
class PreparedRows:
    """One batch's rows in table column order, plus the BM25 length sum of its chunks."""

    chunks: pa.Table  # CHUNK_COLUMNS
    postings: list[tuple[str, str, str, int, int]]
    documents: list[tuple[Any, ...]]
    chunk_bytes: list[int]  # estimated size per chunk row
    total_len: int


def prepare(
    chunks: pa.Table,
    vectors: np.ndarray | None,
    documents: list[dict[str, Any]],
    *,
    with_body: bool,
) -> PreparedRows:
    """Everything a load writes, computed before its transaction starts (analysis and vector
    formatting are the slow part; a transaction should only send)."""
    cols = {name: chunks.column(name).to_pylist() for name in CHUNK_SCHEMA.names}
    terms: list[ChunkTerms] = [
        chunk_terms(ctx, body) for ctx, body in zip(cols["context"], cols["content"], strict=True)
    ]
    for name in LIST_COLUMNS:
        cols[name] = [json.dumps(v or [], ensure_ascii=False) for v in cols[name]]
    cols["deprecated"] = [int(bool(v)) for v in cols["deprecated"]]
    cols["text_key"] = [text_key(content) for content in cols["content"]]
    cols["body_len"] = [t.doc_len for t in terms]
    cols["body"] = (
        [" ".join(t for t, n in ct.tf.items() for _ in range(n)) for ct in terms]
        if with_body
        else [None] * len(terms)
    )
    # None: loaded by the lexical phase; the embedding stays NULL until put_vectors.
    cols["embedding"] = [None] * len(cols["chunk_id"]) if vectors is None else vector_texts(vectors)
    table = pa.table({name: cols[name] for name in CHUNK_COLUMNS})
    sizes = [
        sum(len(v) if isinstance(v, str) else 8 for v in row)
        for row in zip(*(cols[n] for n in CHUNK_COLUMNS), strict=True)
    ]
    for chunk_id, size in zip(cols["chunk_id"], sizes, strict=True):
        if size > MAX_ROW_BYTES:
            raise StoreError(
                f"chunk {chunk_id!r} is about {size} bytes, over TiDB's 6 MiB row limit; "
                "split the document into smaller chunks"
            )
    return PreparedRows(
        chunks=table,
        postings=posting_rows(cols["chunk_id"], cols["doc_id"], terms),
        documents=[tuple(d[c] for c in DOCUMENT_COLUMNS) for d in documents],
        chunk_bytes=sizes,
        total_len=sum(cols["body_len"]),
    )


def document_groups(
    doc_ids: Sequence[str], chunk_doc_ids: Sequence[str], chunk_bytes: Sequence[int]
) -> list[list[str]]:
    """Whole documents in order, grouped so each group's rows stay under MAX_TXN_BYTES (a
    document over the budget is a group of its own). One group = one transaction."""
    per_doc: dict[str, int] = dict.fromkeys(doc_ids, 0)
    for doc_id, size in zip(chunk_doc_ids, chunk_bytes, strict=True):
        # Postings and index entries roughly double what a chunk row costs.
        per_doc[doc_id] += 2 * size
    groups: list[list[str]] = [[]]
    used = 0
    for doc_id, size in per_doc.items():
        if groups[-1] and used + size > MAX_TXN_BYTES:
            groups.append([])
            used = 0
        groups[-1].append(doc_id)
        used += size
    return groups


def write_rows(
    cur: Any, tables: Tables, rows: PreparedRows, method: LoadMethod, staging_dir: str | None
) -> None:
    """Send the chunk and posting rows on the caller's transaction. A server (or client) that
    refuses LOCAL INFILE gets multi-row INSERTs instead: a failed statement does not end the
    transaction, so the batch stays whole."""
    if method is LoadMethod.LOAD_DATA:
        try:
            _load_data(cur, render("load_chunks", tables), _chunk_frame(rows.chunks), staging_dir)
            postings = pl.DataFrame(rows.postings, schema=list(POSTING_COLUMNS), orient="row")
            _load_data(cur, render("load_postings", tables), postings, staging_dir)
            return
        except pymysql.Error as exc:
            if error_code(exc) not in LOCAL_INFILE_REFUSED:
                raise
            log.warning("LOAD DATA LOCAL INFILE refused (%s); loading with INSERT", exc)
    tuples = list(zip(*(c.to_pylist() for c in rows.chunks.columns), strict=True))
    if tuples:
        cur.executemany(render("insert_chunks", tables), tuples)
    if rows.postings:
        cur.executemany(render("insert_postings", tables), rows.postings)


def _chunk_frame(table: pa.Table) -> pl.DataFrame:
    return pl.from_arrow(table)  # type: ignore[return-value]


def _escape_text(frame: pl.DataFrame) -> pl.DataFrame:
    """MySQL's LOAD DATA escapes (ESCAPED BY '\\'): backslash first, then the characters that
    would end a field or line."""
    exprs = []
    for name, dtype in frame.schema.items():
        if dtype == pl.String:
            expr = pl.col(name)
            for raw, escaped in (("\\", "\\\\"), ("\t", "\\t"), ("\n", "\\n"), ("\r", "\\r")):
                expr = expr.str.replace_all(raw, escaped, literal=True)
            exprs.append(expr.str.replace_all("\x00", "\\0", literal=True))
    return frame.with_columns(exprs) if exprs else frame


def _load_data(cur: Any, statement: str, frame: pl.DataFrame, staging_dir: str | None) -> None:
    if frame.height == 0:
        return
    with _tsv_file(staging_dir) as path:
        _escape_text(frame).write_csv(
            path, separator="\t", include_header=False, quote_style="never", null_value="\\N"
        )
        loaded = cur.execute(statement, {"path": path})
    if loaded != frame.height:
        # LOCAL loads skip duplicate keys with a warning instead of failing.
        raise StoreError(
            f"LOAD DATA wrote {loaded} of {frame.height} rows: a chunk id in the batch is "
            "already used by another document"
        )


@contextmanager
def _tsv_file(directory: str | None) -> Iterator[str]:
    """A private temporary file path, removed afterwards."""
    fd, path = tempfile.mkstemp(suffix=".tsv", dir=directory)
    os.close(fd)
    try:
        yield path
    finally:
        with suppress(FileNotFoundError):
            os.unlink(path)
