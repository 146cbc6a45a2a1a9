"""What the embedded store's tests share: a store under the test's temporary directory, and
a second connection on an index file, as another process would have."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from core.store.sqlite.index import SQLiteIndex
from core.store.sqlite.store import SQLiteStore


@pytest.fixture
def store(tmp_path: Path) -> SQLiteStore:
    return SQLiteStore(tmp_path / "indexes")


def raw(index: SQLiteIndex) -> sqlite3.Connection:
    """A separate connection on the index file, like another process would have."""
    conn = sqlite3.connect(index.path, isolation_level=None, timeout=5.0)
    conn.execute("PRAGMA busy_timeout = 5000")
    return conn


def fts_config(index: SQLiteIndex) -> dict[str, object]:
    """The full-text table's FTS5 options, as stored in the file."""
    with raw(index) as conn:
        return dict(conn.execute("SELECT k, v FROM chunks_fts_config"))
