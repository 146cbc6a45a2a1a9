"""Schema of the TiDB store: the index registry, per-index migrations (each once, in order),
the vector column and what the server offers (HNSW on TiFlash, native full-text search).

MariaDB stands in for TiDB in the tests; for it the same files render with the vector column
as LONGTEXT, without vector-index/TiFlash/multi-valued-index DDL, and with a stored function
for VEC_COSINE_DISTANCE.
"""

from __future__ import annotations

import logging
import re
from datetime import UTC, datetime
from typing import Any

import pymysql

from core.store.contract import SchemaOutdated, StoreError
from core.store.migrations import outdated_message, pending_migrations, run_migrations
from core.store.tidb.bm25 import native_fts_works
from core.store.tidb.conn import error_code
from core.store.tidb.sql import (
    DIALECT_DIR,
    Server,
    Tables,
    migration_statements,
    render,
    statements,
)
from sql import Migration, migrations

log = logging.getLogger(__name__)
MAX_DIM = 16383  # TiDB's VECTOR(D) limit
_NO_TIFLASH = ("tiflash server count: 0", "tiflash store count is 0", "tiflash replica")
_said_no_tiflash: set[str] = set()
# The names the capability DDL gives its indexes (sql/tidb/capabilities.sql).
VECTOR_INDEX = "embedding_hnsw"
FTS_INDEX = "body_fts"
DUPLICATE_KEY_NAME = 1061


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def prepare_database(conn: Any, server: Server) -> None:
    """Objects shared by every index: the registry and, on MariaDB, the distance function."""
    with conn.cursor() as cur:
        cur.execute(render("registry"))
        if server is Server.MARIADB:
            function = render("mariadb_vec_cosine_distance")
            wanted = re.search(r"COMMENT '([^']*)'", function)
            cur.execute(render("mariadb_function_comment"))
            installed = cur.fetchone()
            if wanted is None or installed is None or installed[0] != wanted.group(1):
                cur.execute(function)


def migrate(conn: Any, tables: Tables, server: Server) -> int:
    """Apply every migration not yet recorded. DDL commits implicitly on both servers, so
    migrations are idempotent statements recorded afterwards; two processes racing both run
    them harmlessly and one record stays. Returns the schema version."""
    with conn.cursor() as cur:

        def apply(migration: Migration) -> None:
            for statement in migration_statements(migration, tables, server):
                cur.execute(statement)
            cur.execute(
                render("migration_record", tables),
                {"version": migration.version, "name": migration.name, "applied_at": now()},
            )

        cur.execute(render("migrations_table", tables))
        cur.execute(render("migrations_applied", tables))
        return run_migrations(DIALECT_DIR, {row[0] for row in cur.fetchall()}, apply)


# MySQL's "table doesn't exist": an index no migration has run on yet.
NO_SUCH_TABLE = 1146


def current_version(conn: Any, tables: Tables, what: str) -> int:
    """The schema version of an index a handle only reads; SchemaOutdated when a writer has
    migrations left to apply (core/store/migrations.py: readers never migrate)."""
    with conn.cursor() as cur:
        try:
            cur.execute(render("migrations_applied", tables))
            applied = {row[0] for row in cur.fetchall()}
        except pymysql.Error as exc:
            if error_code(exc) != NO_SUCH_TABLE:
                raise StoreError(f"cannot read the schema version of {what}: {exc}") from exc
            applied = set()
    pending = [m.name for m in pending_migrations(DIALECT_DIR, applied)]
    version = max(applied, default=0)
    if pending:
        reasons = [f"schema version {version}, migrations {', '.join(pending)} to apply"]
        raise SchemaOutdated(outdated_message(what, reasons))
    return version


def vector_type(server: Server, dim: int) -> str:
    if not 0 < dim <= MAX_DIM:
        raise StoreError(f"vector dimension {dim} is outside TiDB's 1..{MAX_DIM}")
    return f"VECTOR({int(dim)})" if server is Server.TIDB else "LONGTEXT"


def vector_ddl(tables: Tables, server: Server, dim: int) -> list[str]:
    """The statements giving an index its embedding column and (on TiDB) its HNSW index."""
    out = statements(render("add_embedding_column", tables, vector_type=vector_type(server, dim)))
    if server is Server.TIDB:
        out += statements(render("tiflash_replica", tables))
        out += statements(render("vector_index", tables))
    return out


def index_ddl(tables: Tables, server: Server, dim: int) -> list[str]:
    """Every DDL statement a new index gets on `server`, in order: the migrations, then the
    vector column and index. For review and golden tests; nothing runs it as one script."""
    out: list[str] = []
    for migration in migrations(DIALECT_DIR):
        out += migration_statements(migration, tables, server)
    return out + vector_ddl(tables, server, dim)


def add_vector_column(conn: Any, tables: Tables, server: Server, dim: int) -> str:
    """Create the embedding column; on TiDB with TiFlash also the HNSW index. Returns the
    vector search mode recorded for the index: 'hnsw' or 'exact'. Every step may already
    have run (a crash, or another process binding at once), so each is skipped or harmless
    when repeated."""
    column, *index_ddl = vector_ddl(tables, server, dim)
    with conn.cursor() as cur:
        cur.execute(column)
        if not index_ddl:
            return "exact"
        if has_index(cur, tables, VECTOR_INDEX):
            return "hnsw"
        try:
            for statement in index_ddl:
                cur.execute(statement)
        except pymysql.Error as exc:
            if error_code(exc) == DUPLICATE_KEY_NAME:  # another binder created it meanwhile
                return "hnsw"
            if not any(marker in str(exc).lower() for marker in _NO_TIFLASH):
                raise
            key = f"{conn.host}:{conn.port}"
            if key not in _said_no_tiflash:  # once per server and process
                _said_no_tiflash.add(key)
                log.warning(
                    "TiDB at %s has no TiFlash: no HNSW vector index, vector search scans "
                    "exactly (%s)",
                    key,
                    exc,
                )
            return "exact"
    return "hnsw"


def has_index(cur: Any, tables: Tables, index: str) -> bool:
    cur.execute(render("index_exists"), {"table": tables.names()["chunks"], "index": index})
    return bool(cur.fetchone()[0])


def bm25_mode(conn: Any, tables: Tables, server: Server, recorded: str) -> str:
    """'native' where TiDB's full-text search really works (then the index gets its FULLTEXT
    index), else 'sql' (BM25 over the postings table). An index that already holds chunks
    keeps its `recorded` mode: chunks loaded in 'sql' mode have no analysed body to search."""
    with conn.cursor() as cur:
        cur.execute(render("chunks_any", tables))
        if cur.fetchone()[0]:
            return recorded
        if server is Server.TIDB and has_index(cur, tables, FTS_INDEX):
            return "native"
    if server is not Server.TIDB or not native_fts_works(conn):
        return "sql"
    try:
        with conn.cursor() as cur:
            cur.execute(render("fts_add_index", tables))
    except pymysql.Error as exc:
        if error_code(exc) == DUPLICATE_KEY_NAME:
            return "native"
        log.warning("native full-text index could not be added, using SQL BM25: %s", exc)
        return "sql"
    return "native"


def compact_tiflash(conn: Any, tables: Tables) -> bool:
    """Merge TiFlash's delta layer so recent rows reach the HNSW index. Only an optimisation:
    a failure is logged and the load stands. Returns whether it ran."""
    try:
        with conn.cursor() as cur:
            cur.execute(render("compact_tiflash", tables))
    except pymysql.Error as exc:
        log.warning("TiFlash compaction of %s failed: %s", tables.names()["chunks"], exc)
        return False
    return True


def tiflash_progress(conn: Any, tables: Tables, server: Server) -> list[dict[str, Any]]:
    """HNSW build progress rows of INFORMATION_SCHEMA.TIFLASH_INDEXES (TiDB only)."""
    if server is not Server.TIDB:
        return []
    with conn.cursor(pymysql.cursors.DictCursor) as cur:
        cur.execute(render("tiflash_index_progress"), {"table": tables.names()["chunks"]})
        return [{k.lower(): v for k, v in row.items()} for row in cur.fetchall()]
