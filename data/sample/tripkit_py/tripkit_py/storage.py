"""SQLite persistence for trips and stops."""

from __future__ import annotations

import functools
import json
import logging
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from tripkit_py.models import Category, Stop, Trip

log = logging.getLogger(__name__)

P = ParamSpec("P")
R = TypeVar("R")

SCHEMA_VERSION = 3

_MIGRATIONS: dict[int, str] = {
    1: """
        CREATE TABLE trips (
            id TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            destination TEXT NOT NULL DEFAULT '',
            start_date TEXT NOT NULL,
            end_date TEXT NOT NULL,
            category TEXT NOT NULL DEFAULT 'leisure',
            company TEXT,
            last_modified TEXT NOT NULL
        );
        CREATE TABLE stops (
            trip_id TEXT NOT NULL REFERENCES trips(id) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            name TEXT NOT NULL,
            latitude REAL NOT NULL,
            longitude REAL NOT NULL,
            arrival TEXT NOT NULL,
            PRIMARY KEY (trip_id, position)
        );
    """,
    2: "CREATE INDEX trips_by_start ON trips(start_date);",
    3: """
        ALTER TABLE trips ADD COLUMN needs_sync INTEGER NOT NULL DEFAULT 1;
        ALTER TABLE trips ADD COLUMN system_fields BLOB;
    """,
}


def _writes(method: Callable[P, R]) -> Callable[P, R]:
    """Runs a repository method inside a write transaction, under the repository's lock."""

    @functools.wraps(method)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        self = args[0]
        assert isinstance(self, TripRepository)
        with self._lock, self._connection:  # commits, or rolls back on exception
            return method(*args, **kwargs)

    return wrapper


class TripRepository:
    """Stores trips in a SQLite database file.

    The repository is safe to share between threads: every write runs under a lock in its
    own transaction. Use it as a context manager to close the connection::

        with TripRepository.open("trips.db") as repo:
            repo.save(trip)
            upcoming = repo.upcoming()
    """

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._connection = connection
        self._connection.row_factory = sqlite3.Row
        self._connection.execute("PRAGMA foreign_keys = ON")
        self._lock = threading.RLock()
        self._migrate()

    # -- construction -------------------------------------------------------------------

    @classmethod
    def open(cls, path: str | Path) -> TripRepository:
        """Opens (creating if needed) the database at `path`."""
        connection = sqlite3.connect(path, check_same_thread=False, isolation_level="DEFERRED")
        connection.execute("PRAGMA journal_mode = WAL")
        return cls(connection)

    @classmethod
    def in_memory(cls) -> TripRepository:
        """A throwaway database, for tests and previews."""
        return cls(sqlite3.connect(":memory:", check_same_thread=False))

    def __enter__(self) -> TripRepository:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        with self._lock:
            self._connection.close()

    @property
    def schema_version(self) -> int:
        return int(self._connection.execute("PRAGMA user_version").fetchone()[0])

    def _migrate(self) -> None:
        current = self.schema_version
        if current > SCHEMA_VERSION:
            raise RuntimeError(
                f"database schema v{current} is newer than this tripkit_py (v{SCHEMA_VERSION})"
            )
        for version in range(current + 1, SCHEMA_VERSION + 1):
            log.info("migrating trips database to schema v%d", version)
            with self._connection:
                self._connection.executescript(_MIGRATIONS[version])
                self._connection.execute(f"PRAGMA user_version = {version}")

    # -- writes -------------------------------------------------------------------------

    @_writes
    def save(self, trip: Trip, *, mark_for_sync: bool = True) -> None:
        """Inserts or replaces a trip and all its stops."""
        self._connection.execute(
            """
            INSERT INTO trips (id, name, destination, start_date, end_date, category, company,
                               last_modified, needs_sync)
            VALUES (:id, :name, :destination, :start, :end, :category, :company, :modified, :sync)
            ON CONFLICT(id) DO UPDATE SET
                name = excluded.name, destination = excluded.destination,
                start_date = excluded.start_date, end_date = excluded.end_date,
                category = excluded.category, company = excluded.company,
                last_modified = excluded.last_modified, needs_sync = excluded.needs_sync
            """,
            {
                "id": trip.id,
                "name": trip.name,
                "destination": trip.destination,
                "start": trip.start_date.isoformat(),
                "end": trip.end_date.isoformat(),
                "category": trip.category.value,
                "company": trip.company,
                "modified": trip.last_modified.isoformat(),
                "sync": int(mark_for_sync),
            },
        )
        self._connection.execute("DELETE FROM stops WHERE trip_id = ?", (trip.id,))
        self._connection.executemany(
            "INSERT INTO stops (trip_id, position, name, latitude, longitude, arrival) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            [
                (trip.id, i, s.name, s.latitude, s.longitude, s.arrival.isoformat())
                for i, s in enumerate(trip.ordered_stops)
            ],
        )

    @_writes
    def delete(self, trip_id: str) -> bool:
        """Deletes a trip and its stops; returns False if there was no such trip."""
        cursor = self._connection.execute("DELETE FROM trips WHERE id = ?", (trip_id,))
        return cursor.rowcount > 0

    @_writes
    def mark_synced(self, system_fields: dict[str, bytes]) -> int:
        """Clears the sync flag of uploaded trips; returns how many were updated."""
        cursor = self._connection.executemany(
            "UPDATE trips SET needs_sync = 0, system_fields = ? WHERE id = ?",
            [(fields, trip_id) for trip_id, fields in system_fields.items()],
        )
        return cursor.rowcount

    def import_json(self, path: str | Path) -> int:
        """Imports a TripJournal export (a JSON array of trips); returns the count."""
        payload = json.loads(Path(path).read_text(encoding="utf-8"))
        trips = [Trip.from_json(item) for item in payload]
        for trip in trips:
            self.save(trip, mark_for_sync=False)
        return len(trips)

    # -- reads --------------------------------------------------------------------------

    def get(self, trip_id: str) -> Trip | None:
        row = self._connection.execute("SELECT * FROM trips WHERE id = ?", (trip_id,)).fetchone()
        return self._trip_from_row(row) if row else None

    def all(self) -> list[Trip]:
        rows = self._connection.execute("SELECT * FROM trips ORDER BY start_date DESC").fetchall()
        return [self._trip_from_row(row) for row in rows]

    def upcoming(self, today: date | None = None) -> list[Trip]:
        today = today or datetime.now(UTC).date()
        rows = self._connection.execute(
            "SELECT * FROM trips WHERE start_date >= ? ORDER BY start_date", (today.isoformat(),)
        ).fetchall()
        return [self._trip_from_row(row) for row in rows]

    def search(self, text: str, limit: int = 50) -> list[Trip]:
        """Trips whose name or destination contains `text`, case-insensitively."""
        pattern = f"%{self._escape_like(text)}%"
        rows = self._connection.execute(
            "SELECT * FROM trips WHERE name LIKE :p ESCAPE '\\' OR destination LIKE :p ESCAPE '\\' "
            "ORDER BY start_date DESC LIMIT :limit",
            {"p": pattern, "limit": limit},
        ).fetchall()
        return [self._trip_from_row(row) for row in rows]

    def pending_sync(self) -> list[Trip]:
        rows = self._connection.execute("SELECT * FROM trips WHERE needs_sync = 1").fetchall()
        return [self._trip_from_row(row) for row in rows]

    def stats(self) -> dict[str, Any]:
        """Counts and totals for the `tripkit stats` command."""
        row = self._connection.execute(
            """
            SELECT COUNT(*) AS trips,
                   COALESCE(SUM(julianday(end_date) - julianday(start_date)), 0) AS nights,
                   (SELECT COUNT(*) FROM stops) AS stops,
                   SUM(needs_sync) AS pending
            FROM trips
            """
        ).fetchone()
        return {
            "trips": row["trips"],
            "nights": int(row["nights"]),
            "stops": row["stops"],
            "pending_sync": row["pending"] or 0,
        }

    def iter_stops(self, trip_id: str) -> Iterator[Stop]:
        cursor = self._connection.execute(
            "SELECT name, latitude, longitude, arrival FROM stops WHERE trip_id = ? ORDER BY position",
            (trip_id,),
        )
        for name, lat, lon, arrival in cursor:
            yield Stop(name, lat, lon, datetime.fromisoformat(arrival))

    # -- helpers ------------------------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """Runs raw SQL in a single transaction, holding the repository lock throughout."""
        with self._lock, self._connection:
            yield self._connection

    def _trip_from_row(self, row: sqlite3.Row) -> Trip:
        return Trip(
            id=row["id"],
            name=row["name"],
            destination=row["destination"],
            start_date=date.fromisoformat(row["start_date"]),
            end_date=date.fromisoformat(row["end_date"]),
            category=Category(row["category"]),
            company=row["company"],
            stops=list(self.iter_stops(row["id"])),
            last_modified=datetime.fromisoformat(row["last_modified"]),
        )

    @staticmethod
    def _escape_like(text: str) -> str:
        return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")

    def __repr__(self) -> str:
        return f"<TripRepository schema=v{self.schema_version}>"
