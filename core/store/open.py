"""Pick the store for a location: a directory (embedded SQLite) or a tidb:// URL."""

from __future__ import annotations

from pathlib import Path

from core.settings import Settings
from core.store.contract import Store
from core.store.modes import ONE_SHOT, StoreModes


def open_store(
    location: str | Path | None, settings: Settings, *, modes: StoreModes = ONE_SHOT
) -> Store:
    """`None` means the configured default: TiDB when TIDB_HOST is set, else the directory
    `settings.index_dir`. `modes` say how an embedded store searches and loads: FTS5 and no
    warm-up for a one-shot command or a writer (ONE_SHOT), the in-memory postings for a
    process that answers many queries (LONG_LIVED; core/store/modes.py). A TiDB store's
    paths are its indexes' own, so it takes none."""
    if location is None and settings.tidb_host:
        location = "tidb://"
    if location is not None and str(location).startswith(("tidb://", "mysql://")):
        from core.store.tidb.store import TiDBStore

        return TiDBStore.from_url(str(location), settings)
    from core.store.sqlite.store import SQLiteStore

    directory = Path(location) if location is not None else settings.index_dir
    return SQLiteStore(directory, modes=modes)
