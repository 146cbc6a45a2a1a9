"""The scale-out store: named indexes as table sets in one TiDB database.

`TiDBStore.from_url("tidb://user:pw@host:4000/db", settings)`. The server is recognised from
`SELECT VERSION()`; MariaDB is accepted as TiDB's stand-in for tests (see tidb_schema).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pymysql

from core.settings import Settings
from core.store.contract import StoreError, UnknownIndex
from core.store.location import StoreLocation
from core.store.tidb.conn import connect
from core.store.tidb.dsn import Endpoint
from core.store.tidb.index import TiDBIndex
from core.store.tidb.load import LoadMethod
from core.store.tidb.schema import FTS_INDEX, now, prepare_database
from core.store.tidb.search import VectorPlan
from core.store.tidb.sql import (
    Server,
    Tables,
    detect_server,
    placeholders,
    render,
    statements,
)

__all__ = ["TiDBIndex", "TiDBStore"]


class TiDBStore:
    """Named indexes in one TiDB (or MariaDB) database; implements `core.store.contract.Store`."""

    def __init__(
        self,
        endpoint: Endpoint,
        settings: Settings,
        *,
        vector_plan: VectorPlan = VectorPlan.AUTO,
        location: str | None = None,
    ) -> None:
        self.endpoint = endpoint
        self.settings = settings
        self.vector_plan = vector_plan
        # Shown in messages and stats: never the password.
        self.display = f"tidb://{endpoint.user}@{endpoint.describe()}"
        # The store's identity as the caller named it: the query engine checks a request's
        # --store against it by string equality.
        self.location = location or self.display
        self.staging_dir = str(settings.staging_dir) if settings.staging_dir.is_dir() else None
        conn = connect(endpoint)
        try:
            with conn.cursor() as cur:
                cur.execute(render("server_version"))
                self.version = str(cur.fetchone()[0])
            self.server: Server = detect_server(self.version)
            prepare_database(conn, self.server)
        except pymysql.Error as exc:
            raise StoreError(f"cannot prepare {self.display}: {exc}") from exc
        finally:
            conn.close()

    @classmethod
    def from_url(cls, url: str, settings: Settings, **options: Any) -> TiDBStore:
        return cls.at(StoreLocation.parse(url), settings, **options)

    @classmethod
    def at(cls, location: StoreLocation, settings: Settings, **options: Any) -> TiDBStore:
        # "tidb://" alone means the TIDB_* settings: the store is known by its display.
        named = None if location.dsn is None or location.dsn.bare else location.text
        return cls(location.endpoint(settings), settings, location=named, **options)

    def connect(self) -> Any:
        local = self.settings.tidb_load_method == LoadMethod.LOAD_DATA.value
        return connect(self.endpoint, local_infile=local)

    @contextmanager
    def _cursor(self) -> Iterator[Any]:
        conn = self.connect()
        try:
            with conn.cursor() as cur:
                yield cur
        except pymysql.Error as exc:
            raise StoreError(f"{self.display}: {exc}") from exc
        finally:
            conn.close()

    def list_indexes(self) -> list[str]:
        with self._cursor() as cur:
            cur.execute(render("registry_list"))
            return [row[0] for row in cur.fetchall()]

    def open_index(self, name: str, *, create: bool = False, write: bool = False) -> TiDBIndex:
        tables = Tables(name)  # validates the name before any SQL
        with self._cursor() as cur:
            cur.execute(render("registry_has"), {"name": tables.name})
            exists = cur.fetchone()[0] > 0
            if not exists and not create:
                available = ", ".join(self.list_indexes()) or "none"
                raise UnknownIndex(f"no index {name!r} in {self.display} (available: {available})")
            index = TiDBIndex(self, name, write=write or create)
            if not exists:
                cur.execute(render("registry_add"), {"name": name, "created_at": now()})
        return index

    def check_index(self, name: str) -> list[str]:
        """Nothing to check from here: TiDB keeps its data in replicated, checksummed
        storage (TiKV/TiFlash) and repairs it itself; a client-side scan would only cost the
        cluster. Unknown names still fail like everywhere else."""
        Tables(name)
        if name not in self.list_indexes():
            raise UnknownIndex(f"no index {name!r} in {self.display}")
        return []

    def drop_index(self, name: str) -> None:
        """Drop the index's tables, then its registry row. In that order so that a drop that
        fails half-way leaves the index listed, and running it again finishes it; a drop that
        left tables without a registry row (the order before) is finished too. The full-text
        index goes first: TiDB refuses to drop a table that has one."""
        tables = Tables(name)
        chunks = tables.names()["chunks"]
        marks, positions = placeholders("t", len(tables.names()))
        table_names = list(tables.names().values())
        with self._cursor() as cur:
            cur.execute(render("registry_has"), {"name": name})
            registered = cur.fetchone()[0] > 0
            cur.execute(
                render("index_tables_left", table_names=marks),
                {key: table_names[i] for key, i in positions.items()},
            )
            if not registered and not cur.fetchone()[0]:
                raise UnknownIndex(f"no index {name!r} in {self.display}")
            cur.execute(render("index_exists"), {"table": chunks, "index": FTS_INDEX})
            if cur.fetchone()[0]:
                cur.execute(render("drop_fts_index", tables))
            for statement in statements(render("drop_index_tables", tables)):
                cur.execute(statement)
            cur.execute(render("registry_remove"), {"name": name})
