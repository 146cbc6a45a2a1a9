"""The one migration runner: every migration of a dialect not yet applied, once, in order.

How one migration is applied atomically is the backend's business (SQLite wraps it in a write
transaction and re-checks under the lock; on TiDB DDL commits implicitly, so its migrations are
idempotent statements recorded afterwards); which ones to apply, and in what order, is not.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from sql import Migration, migrations


def run_migrations(dialect: str, applied: Iterable[int], apply: Callable[[Migration], None]) -> int:
    """Call `apply` for each migration whose version is not in `applied`, in version order.
    Returns the schema version afterwards."""
    done = set(applied)
    for migration in migrations(dialect):
        if migration.version not in done:
            apply(migration)
            done.add(migration.version)
    return max(done, default=0)
