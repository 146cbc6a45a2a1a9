"""One TiDB index's connection and how statements run on it: under the handle's lock,
retried after transient errors (reconnecting when the connection is gone), writes in one
transaction each, and the meta row that every operation starts from.

Each handle holds one connection, used by one thread at a time (its lock); reads are
autocommit statements, so each sees the last commit.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from contextlib import suppress
from typing import Any, TypeVar

import pymysql

from core.store.contract import StoreError
from core.store.tidb.conn import RECONNECT_CODES, error_code, with_retries
from core.store.tidb.database import Database
from core.store.tidb.schema import current_version, migrate
from core.store.tidb.sql import Tables, render

T = TypeVar("T")


class IndexHandle:
    """The connection of one named index; TiDBIndex builds on it. A handle opened to write
    migrates the index on open; one that only reads checks that nothing is left to migrate
    (no DDL, no wait on a concurrent migration)."""

    def __init__(self, store: Database, name: str, *, write: bool = False) -> None:
        self.store = store
        self.name = name
        self.tables = Tables(name)
        self._lock = threading.RLock()
        # The paths the last keyword and vector searches took (IndexSearch.search_paths).
        self._paths: dict[str, str] = {}
        self._conn = store.connect()
        self._last_used = time.monotonic()
        # Chunks written since this handle last compacted the TiFlash replica.
        self._uncompacted = 0
        try:
            if write:
                self.schema_version = migrate(self._conn, self.tables, store.server)
            else:
                what = f"index {name!r} in {store.display}"
                self.schema_version = current_version(self._conn, self.tables, what)
        except BaseException:
            self._conn.close()
            raise

    def _sql(self, name: str, **parts: str) -> str:
        return render(name, self.tables, **parts)

    def _reconnect(self, exc: BaseException) -> None:
        if error_code(exc) in RECONNECT_CODES or isinstance(exc, pymysql.err.InterfaceError):
            with suppress(pymysql.Error):  # already gone: that is why we reconnect
                self._conn.close()
            self._conn = self.store.connect()

    def _recycle_if_idle(self) -> None:
        """A new connection in place of one idle for longer than the server (or a proxy in
        front of it) may keep it: replacing it costs one connect, finding it dropped costs
        a failed statement, a warning and the retry's backoff."""
        if time.monotonic() - self._last_used < self.store.settings.tidb_max_idle_s:
            return
        with suppress(pymysql.Error):  # it may be gone already: that is why it is replaced
            self._conn.close()
        self._conn = self.store.connect()

    def _run(self, what: str, work: Callable[[Any], T], *, once: frozenset[int] = frozenset()) -> T:
        """`work(cursor)` under the handle's lock, retried after transient errors (and once
        after an error in `once`); other server errors become StoreError naming the index
        and server."""

        def attempt() -> T:
            with self._conn.cursor() as cur:
                return work(cur)

        with self._lock:
            try:
                self._recycle_if_idle()
                return with_retries(attempt, on_retry=self._reconnect, once=once)
            except pymysql.Error as exc:
                raise StoreError(
                    f"{what} on index {self.name!r} ({self.store.display}) failed: {exc}"
                ) from exc
            finally:
                self._last_used = time.monotonic()

    def _write(
        self, what: str, work: Callable[[Any], T], *, once: frozenset[int] = frozenset()
    ) -> T:
        """`work(cursor)` in one transaction, rolled back on any error, retried whole."""

        def in_transaction(cur: Any) -> T:
            self._conn.begin()
            try:
                result = work(cur)
                self._conn.commit()
                return result
            except BaseException:
                self._rollback()
                raise

        return self._run(what, in_transaction, once=once)

    def _rollback(self) -> None:
        with suppress(pymysql.Error):  # a lost connection rolls back on the server
            self._conn.rollback()

    def _meta(self) -> tuple[Any, ...]:
        def read(cur: Any) -> tuple[Any, ...]:
            cur.execute(self._sql("meta_get"))
            row: tuple[Any, ...] = cur.fetchone()
            return row

        return self._run("reading the model", read)

    def _rows(self, what: str, sql: str, params: Any = None) -> list[tuple[Any, ...]]:
        def read(cur: Any) -> list[tuple[Any, ...]]:
            cur.execute(sql, params)
            return list(cur.fetchall())

        return self._run(what, read)

    def close(self) -> None:
        with self._lock, suppress(pymysql.Error):  # closing a dead connection
            self._conn.close()
