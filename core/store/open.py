"""Pick the store for a location: a directory (embedded SQLite) or a tidb:// URL."""

from __future__ import annotations

from pathlib import Path

from core.settings import Settings
from core.store.contract import Store


def open_store(location: str | Path | None, settings: Settings) -> Store:
    """`None` means the configured default: TiDB when TIDB_HOST is set, else the directory
    `settings.index_dir`."""
    if location is None and settings.tidb_host:
        location = "tidb://"
    if location is not None and str(location).startswith(("tidb://", "mysql://")):
        from core.store.tidb.store import TiDBStore

        return TiDBStore.from_url(str(location), settings)
    from core.store.sqlite.store import SQLiteStore

    return SQLiteStore(Path(location) if location is not None else settings.index_dir)
