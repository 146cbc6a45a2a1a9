"""What a handle opened to write does to an older file before anything else, and what a
handle that only reads checks instead: readers never change the user's index (a question,
`status` or `symbol` may run on a read-only file, or beside an ingest), so they refuse a
file older than the code with SchemaOutdated and name `rag-retrieve migrate`."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

from core.store.analyzer import ANALYZER_VERSION
from core.store.contract import SchemaOutdated
from core.store.migrations import outdated_message
from core.store.sqlite.chunk_text import ChunkText
from core.store.sqlite.full_text import reindex_fts
from core.store.sqlite.schema import q, read_failure, schema_version
from core.store.text_key import text_key

log = logging.getLogger("core.store.sqlite.index")

# Rows per read of the one-time text_key fill (fill_text_keys).
TEXT_KEY_BATCH = 10_000

# The index's one write transaction (SQLiteIndex._writing).
Writing = Callable[[], AbstractContextManager[sqlite3.Connection]]


def check_current(reader: sqlite3.Connection, path: Path, name: str) -> int:
    """The schema version, after making sure that nothing a writer does on open is left to
    do (core/store/migrations.py: readers never migrate)."""
    try:
        version, pending = schema_version(reader)
        reasons = [f"schema version {version}, migrations {', '.join(pending)} to apply"]
        if not pending:
            (analyzer,) = reader.execute(q("meta_fts_analyzer")).fetchone()
            (filled,) = reader.execute(q("meta_text_keys_filled")).fetchone()
            reasons = []
            if analyzer != ANALYZER_VERSION:
                reasons.append(
                    f"its full text was indexed by analyzer version {analyzer}, "
                    f"this code's is {ANALYZER_VERSION}"
                )
            if not filled:
                reasons.append("its chunks' text fingerprints (text_key) are not filled")
    except sqlite3.Error as exc:
        raise read_failure(path, exc) from exc
    if reasons:
        raise SchemaOutdated(outdated_message(f"index {name!r} ({path})", reasons))
    return version


def reindex_if_analyzer_changed(
    writer: sqlite3.Connection, writing: Writing, text: ChunkText, path: Path
) -> None:
    """Re-index every chunk's full-text row when the table was written by another
    analyzer version: deleting its rows with this version's tokens would corrupt it."""
    # Read first: taking the write lock on every open would queue readers behind loads.
    if writer.execute(q("meta_fts_analyzer")).fetchone()[0] == ANALYZER_VERSION:
        return
    with writing() as conn:
        (version,) = conn.execute(q("meta_fts_analyzer")).fetchone()
        if version == ANALYZER_VERSION:
            return
        log.warning(
            "index %s: re-indexing its full text (analyzer version %s -> %s)",
            path,
            version,
            ANALYZER_VERSION,
        )
        reindex_fts(conn, text)
        conn.execute(q("meta_bump_generation"))


def fill_text_keys(
    writer: sqlite3.Connection, writing: Writing, text: ChunkText, path: Path
) -> None:
    """Give every chunk written before migration 0012 its text_key, once: fusion reads
    the keys instead of the text (core/store/text_key.py). Keys are not part of any
    snapshot, so the generation stays: no search structure is rebuilt for them."""
    if writer.execute(q("meta_text_keys_filled")).fetchone()[0]:
        return
    with writing() as conn:
        if conn.execute(q("meta_text_keys_filled")).fetchone()[0]:
            return
        after, filled = 0, 0
        while True:
            rows = conn.execute(
                q("chunks_without_text_key"), {"after": after, "n": TEXT_KEY_BATCH}
            ).fetchall()
            if not rows:
                break
            if not after:  # said before the wait: ~4 s per 100k chunks on a busy box
                log.warning(
                    "index %s: fingerprinting its chunks' text, once after an upgrade "
                    "(fusion deduplicates by these keys)",
                    path,
                )
            conn.executemany(
                q("set_text_key"),
                [
                    {"id": rowid, "text_key": text_key(text.decode(conn, content))}
                    for rowid, content in rows
                ],
            )
            after, filled = rows[-1][0], filled + len(rows)
        conn.execute(q("meta_set_text_keys_filled"))
    if filled:
        log.warning("index %s: fingerprinted the text of %d chunks", path, filled)
