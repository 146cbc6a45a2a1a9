"""Pick the store for a location: a directory (embedded SQLite) or a tidb:// URL."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from core.settings import Settings
from core.store.contract import Store, StoreError
from core.store.location import StoreLocation
from core.store.modes import ONE_SHOT, StoreModes

if TYPE_CHECKING:
    from core.store.tidb.store import TiDBStore


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
        return _tidb_store().at(where, settings)
    from core.store.sqlite.store import SQLiteStore

    return SQLiteStore(where.directory, modes=modes)


# The TiDB path's bulk loader formats rows with polars (core/store/tidb/load.py), 180 MB that
# an embedded index never uses: it comes with the `tidb` extra, so the default install stays
# small, and a TiDB location without it is an error that names the extra.
TIDB_EXTRA = "pip install 'rag-retrieve[tidb]'"


def _tidb_store() -> type[TiDBStore]:
    try:
        from core.store.tidb.store import TiDBStore
    except ImportError as exc:
        if exc.name != "polars":
            raise
        raise StoreError(f"a TiDB store needs the tidb extra (polars): {TIDB_EXTRA}") from exc
    return TiDBStore
