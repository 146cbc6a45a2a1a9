"""The chunk's shape is declared once (core.store.contract.CHUNK_SCHEMA); the chunkers' record,
both stores' tables and their insert statements must follow it, column for column."""

from __future__ import annotations

import re
import sqlite3
from contextlib import closing
from dataclasses import fields

import pyarrow as pa
import pytest

from chunkers.model import Chunk
from core.store.contract import CHUNK_SCHEMA, DICT_COLUMNS, LIST_COLUMNS
from core.store.sqlite.store import SQLiteStore
from core.store.tidb.schema import index_ddl
from core.store.tidb.sql import Server, Tables, render
from sql import statement

# Columns a backend adds for itself: the SQLite rowid that joins the FTS table and the
# text_key fusion deduplicates by (core/store/text_key.py; TiDB's comes by a later ALTER);
# TiDB's BM25 document length and analysed text (the vector column comes later, sized to the
# model).
SQLITE_OWN = {"id", "text_key"}
TIDB_OWN = {"body_len", "body"}


def sqlite_family(arrow: pa.DataType, name: str) -> str:
    if name in LIST_COLUMNS or name in DICT_COLUMNS:
        return "TEXT"  # JSON text
    if pa.types.is_integer(arrow) or pa.types.is_boolean(arrow):
        return "INTEGER"
    return "TEXT"


def tidb_family(arrow: pa.DataType, name: str) -> tuple[str, ...]:
    if name in LIST_COLUMNS or name in DICT_COLUMNS:
        return ("JSON",)
    if pa.types.is_boolean(arrow):
        return ("TINYINT(1)",)
    if pa.types.is_integer(arrow):
        return ("INT",)
    return ("VARCHAR", "TEXT", "LONGTEXT")


def tidb_columns(server: Server) -> dict[str, str]:
    ddl = index_ddl(Tables("docs"), server, 384)
    create = next(s for s in ddl if s.startswith("CREATE TABLE IF NOT EXISTS rag_docs_chunks"))
    out = {}
    for line in create.splitlines()[1:]:
        match = re.match(r"\s+(\w+)\s+([A-Z]+(?:\(\d+\))?)", line)
        if match and match.group(1) not in {"PRIMARY", "KEY"}:
            out[match.group(1)] = match.group(2)
    return out


def test_the_chunkers_record_carries_every_column():
    assert set(CHUNK_SCHEMA.names) <= {f.name for f in fields(Chunk)}


def test_the_sqlite_chunks_table_has_exactly_the_schemas_columns(tmp_path):
    SQLiteStore(tmp_path).open_index("shape", create=True).close()
    with closing(sqlite3.connect(tmp_path / "shape.sqlite")) as conn:
        rows = conn.execute("PRAGMA table_info(chunks)").fetchall()
    columns = {row[1]: row[2] for row in rows}
    assert set(columns) - SQLITE_OWN == set(CHUNK_SCHEMA.names)
    for field in CHUNK_SCHEMA:
        assert columns[field.name] == sqlite_family(field.type, field.name), field.name


@pytest.mark.parametrize("server", list(Server))
def test_the_tidb_chunks_table_has_exactly_the_schemas_columns(server):
    columns = tidb_columns(server)
    assert set(columns) - TIDB_OWN == set(CHUNK_SCHEMA.names)
    for field in CHUNK_SCHEMA:
        assert columns[field.name].startswith(tidb_family(field.type, field.name)), field.name


def test_the_sqlite_insert_lists_the_columns_in_schema_order():
    listed = re.search(r"INSERT INTO chunks \(([^)]*)\)", statement("sqlite", "insert_chunk"))
    assert listed is not None
    names = [n.strip() for n in listed.group(1).split(",")]
    assert names == ["id", *CHUNK_SCHEMA.names, "text_key"]


def test_the_tidb_inserts_list_the_columns_in_schema_order():
    for name in ("insert_chunks", "load_chunks"):
        text = render(name, Tables("docs"), placeholders="%s")
        listed = re.search(r"\((\s*chunk_id,[^)]*)\)", text)
        assert listed is not None, name
        names = [n.strip().lstrip("@") for n in listed.group(1).split(",")]
        assert names[: len(CHUNK_SCHEMA.names)] == list(CHUNK_SCHEMA.names), name
