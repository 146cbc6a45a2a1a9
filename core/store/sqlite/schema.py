"""Connections to an index file and its versioned schema migrations (sql/sqlite/migrations)."""

from __future__ import annotations

import os
import sqlite3
import uuid
from datetime import UTC, datetime
from pathlib import Path

from core.store.analyzer import ANALYZER_VERSION
from core.store.contract import StoreError
from core.store.migrations import pending_migrations, run_migrations
from sql import Migration, statement

DIALECT = "sqlite"


def q(name: str) -> str:
    """One named statement of the SQLite dialect (sql/sqlite/*.sql)."""
    return statement(DIALECT, name)


def statements(script: str) -> list[str]:
    """Split a script into complete statements (trigger bodies stay whole)."""
    out: list[str] = []
    buffer = ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            stripped = _strip_comments(buffer)
            if stripped:
                out.append(buffer.strip())
            buffer = ""
    if _strip_comments(buffer):
        raise ValueError(f"incomplete SQL statement at end of script: {buffer.strip()[:80]!r}")
    return out


def _strip_comments(text: str) -> str:
    return "\n".join(line.split("--", 1)[0] for line in text.splitlines()).strip(" \n\t;")


def run_script(conn: sqlite3.Connection, script: str) -> None:
    """Execute each statement in the caller's transaction (unlike executescript, which
    commits first)."""
    for one in statements(script):
        conn.execute(one).fetchall()


def connect(path: Path, *, create: bool) -> sqlite3.Connection:
    """A writer's autocommit connection (transactions are explicit) with the index pragmas
    set."""
    conn = _open(path, "rwc" if create else "rw")
    try:
        run_script(conn, q("connection_setup"))
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise StoreError(f"{path} is not a usable SQLite index ({exc})") from exc
    return conn


# SQLite's primary result codes of a read-only WAL file whose -shm it may not create.
_SQLITE_READONLY, _SQLITE_CANTOPEN = 8, 14


def connect_reader(path: Path) -> sqlite3.Connection:
    """A connection that can only read (mode=ro), set up for reading.

    A WAL file is read through its -shm file, which a read-only connection creates when the
    folder lets it. In a folder it may not write to, with no -shm there (no connection has
    the file open), the file is opened `immutable` instead: SQLite then reads it without
    any locking, which is sound only while nothing writes to it, and nothing can without
    creating the -wal and -shm files this reader could not."""
    conn = _open(path, "ro")
    try:
        _set_up_reader(conn)
    except sqlite3.OperationalError as exc:
        conn.close()
        if exc.sqlite_errorcode & 0xFF not in (_SQLITE_READONLY, _SQLITE_CANTOPEN):
            raise StoreError(f"{path} is not a usable SQLite index ({exc})") from exc
        conn = _open(path, "ro&immutable=1")
        try:
            _set_up_reader(conn)
        except sqlite3.DatabaseError as again:
            conn.close()
            raise StoreError(f"cannot read SQLite index {path}: {again}") from again
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise StoreError(f"{path} is not a usable SQLite index ({exc})") from exc
    return conn


def _set_up_reader(conn: sqlite3.Connection) -> None:
    run_script(conn, q("connection_read_only"))
    conn.execute(q("read_probe")).fetchall()


def _open(path: Path, mode: str) -> sqlite3.Connection:
    try:
        return sqlite3.connect(
            f"{path.resolve().as_uri()}?mode={mode}",
            uri=True,
            isolation_level=None,
            check_same_thread=False,  # each SQLiteIndex serialises use with its own locks
            timeout=30.0,
        )
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open SQLite index {path}: {exc}") from exc


def create_file(path: Path) -> None:
    """Make a new index file complete (16 KiB pages, WAL, every migration) under a temporary
    name, then link it into place, so that no connection ever opens a file half made.
    Switching a new file to WAL while another connection opened it failed with "database is
    locked" or "disk I/O error" (an MCP server warming up while its watcher's first ingest
    created the index). When another process links its file first, that one is kept."""
    temporary = path.with_name(f".{path.name}.{uuid.uuid4().hex}.creating")
    try:
        conn = connect(temporary, create=True)
        try:
            migrate(conn, temporary)
            mark_current(conn)
        finally:
            conn.close()  # the last connection: SQLite checkpoints and removes the WAL
        try:
            os.link(temporary, path)
        except FileExistsError:
            pass
        except OSError:  # a file system without hard links
            if not path.exists():
                os.replace(temporary, path)
    except OSError as exc:
        raise StoreError(f"cannot create SQLite index {path}: {exc}") from exc
    finally:
        for leftover in (temporary, Path(f"{temporary}-wal"), Path(f"{temporary}-shm")):
            leftover.unlink(missing_ok=True)


def mark_current(conn: sqlite3.Connection) -> None:
    """Say of a new, empty file that nothing is left to re-index or fingerprint: said before
    it is linked into place, a reader that opens it at once finds it current (readers refuse
    a file a writer has work left on: core/store/sqlite/upgrade.py)."""
    with conn:
        conn.execute(q("meta_set_fts_analyzer"), {"version": ANALYZER_VERSION})
        conn.execute(q("meta_set_text_keys_filled"))


def migrate(conn: sqlite3.Connection, path: Path) -> int:
    """Apply every migration not yet recorded, each in its own transaction, exactly once even
    when several processes open a new file at the same time. Returns the schema version."""

    def applied() -> set[int]:
        return {row[0] for row in conn.execute(q("migrations_applied"))}

    def apply(migration: Migration) -> None:
        conn.execute(q("tx_begin_write"))
        try:
            # Another process may have applied it while we waited for the write lock.
            if migration.version in applied():
                conn.execute(q("tx_rollback"))
                return
            run_script(conn, migration.script)
            conn.execute(
                q("migration_record"),
                {"version": migration.version, "name": migration.name, "applied_at": _now()},
            )
            conn.execute(q("tx_commit"))
        except BaseException:
            conn.execute(q("tx_rollback"))
            raise

    try:
        conn.execute(q("schema_migrations"))
        return run_migrations(DIALECT, applied(), apply)
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"cannot migrate SQLite index {path}: {exc}") from exc


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def schema_version(conn: sqlite3.Connection) -> tuple[int, list[str]]:
    """The file's schema version and, for a file older than the code, the migrations a
    writer would apply: read only, so a reader can tell before it reads anything else."""
    if not conn.execute(q("schema_migrations_present")).fetchone()[0]:
        applied: set[int] = set()
    else:
        applied = {row[0] for row in conn.execute(q("migrations_applied"))}
    return max(applied, default=0), [m.name for m in pending_migrations(DIALECT, applied)]


def read_failure(path: Path, exc: sqlite3.Error, what: str = "") -> StoreError:
    """A read error; when SQLite says the file is damaged, also what to do about it."""
    message = f"cannot read {what}index {path}: {exc}"
    if isinstance(exc, sqlite3.DatabaseError) and any(
        sign in str(exc) for sign in ("malformed", "not a database", "disk I/O")
    ):
        message += (
            " (the file is damaged: `python -m query status` checks every index; move it "
            "aside and ingest again to rebuild)"
        )
    return StoreError(message)
