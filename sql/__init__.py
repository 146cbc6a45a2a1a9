"""SQL text of every store, one statement (or migration script) per file, loaded by name.

Keeping SQL out of Python makes it reviewable as SQL and stops values from being formatted
into statements: Python only binds parameters.
"""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources

_NAME = re.compile(r"^[A-Za-z0-9_]+$")


class SQLNotFound(LookupError):
    """No such dialect or statement file."""


@lru_cache(maxsize=256)
def load_sql(dialect: str, name: str) -> str:
    """The text of `sql/<dialect>/<name>.sql`."""
    if not _NAME.match(dialect) or not _NAME.match(name):
        raise SQLNotFound(f"invalid SQL resource name: {dialect}/{name}")
    resource = resources.files(__package__).joinpath(dialect, f"{name}.sql")
    try:
        return resource.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SQLNotFound(f"no SQL file sql/{dialect}/{name}.sql") from None


def list_sql(dialect: str) -> list[str]:
    """Names (without .sql) of every statement file of a dialect, sorted."""
    if not _NAME.match(dialect):
        raise SQLNotFound(f"invalid SQL dialect name: {dialect}")
    folder = resources.files(__package__).joinpath(dialect)
    return sorted(entry.name[:-4] for entry in folder.iterdir() if entry.name.endswith(".sql"))
