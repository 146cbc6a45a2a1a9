"""The embedded store: a directory holding one SQLite file per named index (index.py)."""

from __future__ import annotations

import os
import re
import sqlite3
import weakref
from pathlib import Path

from core.store.contract import InvalidLocation, StoreError, UnknownIndex
from core.store.modes import ONE_SHOT, StoreModes
from core.store.sqlite.index import SQLiteIndex
from core.store.sqlite.keyword import KEYWORDS, KEYWORDS_SUFFIX, Refresher
from core.store.sqlite.schema import connect_reader
from core.store.sqlite.vectors import SNAPSHOTS

SUFFIX = ".sqlite"
_INDEX_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
# Files up to this size get the full integrity_check before a write (seconds at most);
# bigger ones the linear quick_check, which skips comparing index entries with their rows.
FULL_CHECK_BYTES = 256 << 20


class SQLiteStore:
    """A directory of `<name>.sqlite` files; implements `core.store.contract.Store`. Every
    index it opens searches and loads as `modes` say (core/store/modes.py)."""

    def __init__(self, directory: str | Path, *, modes: StoreModes = ONE_SHOT) -> None:
        self.directory = Path(directory)
        self.location = str(self.directory)
        self.modes = modes
        # Lent to every handle: one background rebuild of an index's postings at a time.
        self.refresher = Refresher()
        self._open: weakref.WeakSet[SQLiteIndex] = weakref.WeakSet()

    def path_for(self, name: str) -> Path:
        if not _INDEX_NAME.match(name):
            raise InvalidLocation(
                f"invalid index name {name!r}: use letters, digits, '_', '.', '-' "
                "(not starting with a punctuation mark)"
            )
        return self.directory / f"{name}{SUFFIX}"

    def list_indexes(self) -> list[str]:
        if not self.directory.is_dir():
            return []
        return sorted(
            p.name[: -len(SUFFIX)] for p in self.directory.glob(f"*{SUFFIX}") if p.is_file()
        )

    def open_index(self, name: str, *, create: bool = False, write: bool = False) -> SQLiteIndex:
        """A handle on index `name`: one that may write (`write`, or `create`, which also
        makes the file) migrates it first; any other reads it through a read-only
        connection, also in a folder or from a file it may not write (SQLiteIndex)."""
        path = self.path_for(name)
        if not path.exists():
            if not create:
                available = ", ".join(self.list_indexes()) or "none"
                raise UnknownIndex(
                    f"no index {name!r} in {self.directory} (available: {available})"
                )
            self._ensure_directory()
        elif (write or create) and not os.access(self.directory, os.W_OK):
            # A writer's WAL needs to create -wal/-shm files next to the index.
            raise StoreError(f"index directory {self.directory} is not writable")
        index = SQLiteIndex(
            path, name, create=create, write=write, modes=self.modes, refresher=self.refresher
        )
        self._open.add(index)
        return index

    def check_index(self, name: str) -> list[str]:
        """SQLite's own consistency check of the file, through a connection that only
        reads, so it cannot make things worse: the full `integrity_check` up to FULL_CHECK_BYTES, the
        linear-time `quick_check` above. Returns its findings; [] when the file is sound.
        SQLite keeps no page checksums, so damage inside text or vector bytes that leaves
        the b-tree well-formed goes unnoticed by any check. Each finding names the file."""
        path = self.path_for(name)
        if not path.exists():
            raise UnknownIndex(f"no index {name!r} in {self.directory}")
        pragma = "integrity_check" if path.stat().st_size <= FULL_CHECK_BYTES else "quick_check"
        # Through a read-only connection: a check must not write, and the store may be
        # read-only (a shared folder, a file the user may not write).
        try:
            conn = connect_reader(path)
        except StoreError as exc:
            return [f"{path}: cannot open: {exc}"]
        try:
            rows = conn.execute(f"PRAGMA {pragma}(20)").fetchall()
        except sqlite3.DatabaseError as exc:
            return [f"{path}: {exc}"]
        finally:
            conn.close()
        findings = [str(row[0]) for row in rows]
        return [] if findings == ["ok"] else [f"{path}: {finding}" for finding in findings]

    def drop_index(self, name: str) -> None:
        path = self.path_for(name)
        if not path.exists():
            raise UnknownIndex(f"no index {name!r} in {self.directory}")
        for index in list(self._open):
            if index.path == path:
                index.close()
        SNAPSHOTS.evict(str(path.resolve()))
        KEYWORDS.evict(str(path.resolve()))
        for suffix in ("", "-wal", "-shm", KEYWORDS_SUFFIX):
            try:
                Path(f"{path}{suffix}").unlink()
            except FileNotFoundError:
                pass
            except OSError as exc:
                raise StoreError(f"cannot delete {path}{suffix}: {exc}") from exc

    def _ensure_directory(self) -> None:
        if self.directory.exists() and not self.directory.is_dir():
            raise InvalidLocation(f"store {self.directory} is a file, not an index directory")
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create index directory {self.directory}: {exc}") from exc
        if not os.access(self.directory, os.W_OK):
            raise StoreError(f"index directory {self.directory} is not writable")
