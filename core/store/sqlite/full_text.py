"""Keeping the contentless FTS5 table in step with the chunks.

The table keeps no copy of the text it indexes (sql/sqlite/migrations/0003), so deleting a
row or rebuilding the table analyses the chunks again (`analyzed_text`, as `apply` did);
`ANALYZER_VERSION` in the meta row guards that it is the same analysis.
"""

from __future__ import annotations

import sqlite3

from core.store.analyzer import ANALYZER_VERSION, analyzed_text
from core.store.sqlite.chunk_text import ChunkText
from core.store.sqlite.schema import q
from core.store.sqlite.vectors import LOAD_BATCH


def delete_fts_rows(conn: sqlite3.Connection, text: ChunkText, touched: dict[str, str]) -> None:
    """Delete the full-text rows of the documents named in `touched` (a JSON list bound as
    :doc_ids)."""
    rows = conn.execute(q("fts_rows_of_docs"), touched).fetchall()
    conn.executemany(
        q("delete_fts_row"),
        [(rowid, analyzed_text(c, text.decode(conn, t))) for rowid, c, t in rows],
    )


def reindex_fts(conn: sqlite3.Connection, text: ChunkText) -> None:
    """Index every chunk again with this analyzer version, inside the caller's write
    transaction, and record the version."""
    conn.execute(q("fts_delete_all"))
    cursor = conn.execute(q("fts_all_rows"))
    while batch := cursor.fetchmany(LOAD_BATCH):
        conn.executemany(
            q("insert_fts"),
            [(rowid, analyzed_text(c, text.decode(conn, t))) for rowid, c, t in batch],
        )
    conn.execute(q("meta_set_fts_analyzer"), {"version": ANALYZER_VERSION})
