"""Pick the store for a location: a directory (embedded SQLite) or a tidb:// URL."""

from __future__ import annotations

from pathlib import Path

from core.settings import Settings
from core.store.contract import Store
from core.store.location import StoreLocation


def open_store(location: str | Path | StoreLocation | None, settings: Settings) -> Store:
    """`None` means the configured default: TiDB when TIDB_HOST is set, else the directory
    `settings.index_dir` (StoreLocation.of)."""
    where = StoreLocation.of(location, settings)
    if where.directory is None:
        from core.store.tidb.store import TiDBStore

        return TiDBStore.at(where, settings)
    from core.store.sqlite.store import SQLiteStore

    return SQLiteStore(where.directory)
