"""Pick the store for a location: a directory (embedded SQLite) or a tidb:// URL."""

from __future__ import annotations

from pathlib import Path

from core.settings import Settings
from core.store.contract import Store
from core.store.location import StoreLocation
from core.store.modes import ONE_SHOT, StoreModes


def open_store(
    location: str | Path | StoreLocation | None,
    settings: Settings,
    *,
    modes: StoreModes = ONE_SHOT,
) -> Store:
    """`None` means the configured default: TiDB when TIDB_HOST is set, else the directory
    `settings.index_dir` (StoreLocation.of). `modes` say how an embedded store searches and
    loads: FTS5 and no warm-up for a one-shot command or a writer (ONE_SHOT), the in-memory
    postings for a process that answers many queries (LONG_LIVED; core/store/modes.py). A
    TiDB store's paths are its indexes' own, so it takes none."""
    where = StoreLocation.of(location, settings)
    if where.directory is None:
        from core.store.tidb.store import TiDBStore

        return TiDBStore.at(where, settings)
    from core.store.sqlite.store import SQLiteStore

    return SQLiteStore(where.directory, modes=modes)
