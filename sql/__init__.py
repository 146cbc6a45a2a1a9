"""SQL text of every store: named statements per dialect, and each dialect's migrations.

`sql/<dialect>/*.sql` hold named statements in aiosql's format (`-- name: insert_chunk!`
followed by the statement; comments right after the name document it), grouped by concern.
`sql/<dialect>/migrations/NNNN_name.sql` are whole scripts, applied once each, in order.
Keeping SQL out of Python makes it reviewable as SQL and stops values from being formatted
into statements: Python only binds parameters.

aiosql parses the files; the stores execute the text themselves, because they need what its
generated functions do not give: transactions spanning many statements, executemany,
LOAD DATA LOCAL INFILE, and per-index table names rendered into TiDB statements.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources

import aiosql

# The driver whose parameter style each dialect's statements are written in.
_DRIVERS = {"sqlite": "sqlite3", "tidb": "pymysql"}
_MIGRATION = re.compile(r"^(\d{4})_(\w+)\.sql$")


class SQLNotFound(LookupError):
    """No such dialect or named statement."""


@dataclass(frozen=True)
class Migration:
    version: int
    name: str  # the file name without .sql, e.g. "0001_initial"
    script: str


def statement(dialect: str, name: str) -> str:
    """The text of the statement `name` of a dialect."""
    try:
        return _statements(dialect)[name]
    except KeyError:
        raise SQLNotFound(f"no statement {name!r} in sql/{dialect}/*.sql") from None


def statement_names(dialect: str) -> list[str]:
    return sorted(_statements(dialect))


@cache
def migrations(dialect: str) -> tuple[Migration, ...]:
    """Every migration of a dialect, in version order."""
    found = []
    for entry in _folder(dialect).joinpath("migrations").iterdir():
        match = _MIGRATION.match(entry.name)
        if match:
            text = entry.read_text(encoding="utf-8")
            found.append(Migration(int(match.group(1)), entry.name[:-4], text))
    versions = [m.version for m in found]
    if len(set(versions)) != len(versions):
        raise ValueError(f"sql/{dialect}/migrations: two migrations share a version number")
    return tuple(sorted(found, key=lambda m: m.version))


@cache
def _statements(dialect: str) -> dict[str, str]:
    where: dict[str, str] = {}
    out: dict[str, str] = {}
    for entry in sorted(_folder(dialect).iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".sql"):
            continue
        queries = aiosql.from_str(
            entry.read_text(encoding="utf-8"), _DRIVERS[dialect], mandatory_parameters=False
        )
        for name in queries.available_queries:
            if name.endswith("_cursor"):  # aiosql's second accessor of each statement
                continue
            if name in where:
                raise ValueError(
                    f"statement {name!r} is named twice: sql/{dialect}/{where[name]} and "
                    f"sql/{dialect}/{entry.name}"
                )
            where[name] = entry.name
            out[name] = getattr(queries, name).sql
    return out


def _folder(dialect: str) -> resources.abc.Traversable:
    if dialect not in _DRIVERS:
        raise SQLNotFound(f"no SQL dialect {dialect!r} (have: {', '.join(sorted(_DRIVERS))})")
    return resources.files(__package__).joinpath(dialect)
