"""The TiDB store's SQL text: its named statements (sql/tidb), an index's tables, rendering.

Values are always bound. The only things rendered into statement text are identifiers of an
index's tables (from a validated index name), placeholders (one `%s` per list element),
other statement files (fragments such as the filter predicate) and the vector column type,
rendered from an int.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from core.store.contract import InvalidLocation, StoreError
from sql import Migration, statement

DIALECT_DIR = "tidb"
_PLACEHOLDER = re.compile(r"\{(\w+)\}")
# Lowercase only: TiDB compares table names case-insensitively and MariaDB on Linux does not,
# so "Docs" and "docs" would be one index on one server and two on the other.
_INDEX_NAME = re.compile(r"^[a-z0-9][a-z0-9_]{0,47}$")
ONLY_TIDB = "-- only: tidb"


class Server(Enum):
    TIDB = "tidb"
    MARIADB = "mariadb"


def detect_server(version: str) -> Server:
    """The server behind `SELECT VERSION()`; anything else is refused by name."""
    if "tidb" in version.lower():
        return Server.TIDB
    if "mariadb" in version.lower():
        return Server.MARIADB
    raise StoreError(
        f"unsupported server {version!r}: the tidb:// store runs on TiDB (or MariaDB for tests)"
    )


@dataclass(frozen=True)
class Tables:
    """The table set of one named index. None of the suffixes ends with another, so two
    index names can never produce the same table name."""

    name: str

    def __post_init__(self) -> None:
        if not _INDEX_NAME.match(self.name):
            raise InvalidLocation(
                f"invalid index name {self.name!r}: use 1-48 lowercase letters, digits and '_' "
                "(starting with a letter or digit)"
            )

    def names(self) -> dict[str, str]:
        prefix = f"rag_{self.name}"
        return {
            "meta": f"{prefix}_meta",
            "documents": f"{prefix}_documents",
            "chunks": f"{prefix}_chunks",
            "postings": f"{prefix}_postings",
            "refs": f"{prefix}_refs",
            "term_df": f"{prefix}_term_df",
            "migrations": f"{prefix}_migrations",
            "shards": f"{prefix}_shards",
        }


def render(name: str, tables: Tables | None = None, **parts: str) -> str:
    """Statement `name` with its {placeholders} filled; an unknown placeholder is an error, so a
    brace in a statement can never pass through unnoticed."""
    return _fill(f"statement {name}", statement(DIALECT_DIR, name), tables, parts)


def _fill(what: str, text: str, tables: Tables | None, parts: dict[str, str]) -> str:
    values = {**(tables.names() if tables else {}), **parts}
    # Comments are for readers of the .sql file; dropped here so that neither a {name} nor a
    # %(param)s mentioned in one is filled in.
    text = _drop_comment_lines(text)

    def fill(match: re.Match[str]) -> str:
        key = match.group(1)
        if key not in values:
            raise KeyError(f"sql/tidb {what} needs {{{key}}}")
        return values[key]

    return _PLACEHOLDER.sub(fill, text)


def fragment(name: str, tables: Tables, **parts: str) -> str:
    """A statement used inside another: without its comments and final ';'."""
    return _strip_comments(render(name, tables, **parts))


def placeholders(prefix: str, count: int) -> tuple[str, dict[str, int]]:
    """`%(p0)s, %(p1)s, ...` for an IN list, and the name -> position map to bind."""
    if count <= 0:
        raise ValueError("an IN list needs at least one element")
    names = {f"{prefix}{i}": i for i in range(count)}
    return ", ".join(f"%({n})s" for n in names), names


def statements(script: str) -> list[str]:
    """A script split at the ';' ending a line (no statement file has ';' elsewhere at a line
    end), comments removed."""
    out, buffer = [], []
    for line in script.splitlines():
        buffer.append(line)
        if line.rstrip().endswith(";"):
            text = _strip_comments("\n".join(buffer))
            if text:
                out.append(text)
            buffer = []
    rest = _strip_comments("\n".join(buffer))
    if rest:
        out.append(rest)
    return out


def _drop_comment_lines(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("--"))


def _strip_comments(text: str) -> str:
    return _drop_comment_lines(text).strip().rstrip(";").strip()


def migration_statements(migration: Migration, tables: Tables, server: Server) -> list[str]:
    """The statements of one migration for `server`; a `-- only: tidb` migration has none on
    MariaDB (it is still recorded as applied)."""
    if migration.script.lstrip().startswith(ONLY_TIDB) and server is not Server.TIDB:
        return []
    return statements(_fill(f"migration {migration.name}", migration.script, tables, {}))
