"""The one migration runner: every migration of a dialect not yet applied, once, in order.

Only writers migrate (an ingest, a loader, `rag-retrieve migrate`): a handle that only reads
opens the index read-only and, when the index is older than the code, raises SchemaOutdated
(core/store/errors.py) instead of rewriting a file the user may have shared read-only, or
waiting behind an ingest for the write lock.

How one migration is applied atomically is the backend's business (SQLite wraps it in a write
transaction and re-checks under the lock; on TiDB DDL commits implicitly, so its migrations are
idempotent statements recorded afterwards); which ones to apply, and in what order, is not.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from sql import Migration, migrations


def pending_migrations(dialect: str, applied: Iterable[int]) -> list[Migration]:
    """The migrations of a dialect whose version is not in `applied`, in version order."""
    done = set(applied)
    return [m for m in migrations(dialect) if m.version not in done]


def run_migrations(dialect: str, applied: Iterable[int], apply: Callable[[Migration], None]) -> int:
    """Call `apply` for each migration whose version is not in `applied`, in version order.
    Returns the schema version afterwards."""
    done = set(applied)
    for migration in pending_migrations(dialect, done):
        apply(migration)
        done.add(migration.version)
    return max(done, default=0)


def outdated_message(what: str, reasons: Iterable[str]) -> str:
    """What a reader says of an index a writer has still to upgrade, and how to upgrade it."""
    return (
        f"{what} needs upgrading before it can be read ({'; '.join(reasons)}): run "
        "`rag-retrieve migrate` (or ingest into it), which upgrades it in place; commands "
        "that only read never change an index"
    )
