"""Connections to TiDB (or MariaDB standing in for it): TLS, and retrying transient errors.

Where to connect is an `Endpoint`, read from a `tidb://` URL over the TIDB_* settings
(core/store/tidb/dsn.py).
"""

from __future__ import annotations

import logging
import random
import ssl
import time
from collections.abc import Callable
from typing import TypeVar

import pymysql

from core.store.errors import StoreError
from core.store.tidb.dsn import Endpoint

log = logging.getLogger(__name__)
T = TypeVar("T")

# Errors after which the same work, run again from the start, can succeed (TiDB's error-codes
# and pessimistic-transaction docs): 9007 and 8005 write conflict, 8002/8022 "can not retry
# select for update" / transaction retry, 9001-9005 PD/TiKV timeout, busy or resolve-lock
# timeout, 9012/9013 TiFlash timeout / busy (the vector-index and full-text reads), 8027
# schema outdated, 8028 schema changed during the transaction ("the application can safely
# retry the whole transaction"), 1205 lock wait timeout, 1213 deadlock, 2006 server gone
# away, 2013 lost connection during query, 2003 cannot connect (restarting node), 1040 too
# many connections.
TRANSIENT_CODES = frozenset(
    {
        *(9007, 8005, 8002, 8022, 9001, 9002, 9003, 9004, 9005, 9012, 9013, 8027, 8028),
        *(1205, 1213, 2006, 2013, 2003, 1040),
    }
)
# 1105 is TiDB's catch-all "unknown error": transient only as "Information schema is
# changed" after a concurrent DDL; any other 1105 is a real failure.
SCHEMA_CHANGED = (1105, "information schema is changed")
# A duplicate key (1062) where two loaders of one new document raced past each other's
# locks: one more run sees the other's committed rows. A second 1062 is a real collision
# (a chunk id owned by another document).
RETRY_ONCE_CODES = frozenset({1062})
# The connection itself is gone: retrying needs a new one.
RECONNECT_CODES = frozenset({2006, 2013, 2003})


def tls_context(endpoint: Endpoint) -> ssl.SSLContext:
    """TLS for TiDB Cloud and other TLS-only servers: the CA file when given, else the system
    store; with verification, the certificate must also name the host (TiDB Cloud's do).
    Built here rather than from PyMySQL's ssl_* options, which skip the host name check
    whenever no CA file is given."""
    try:
        context = ssl.create_default_context(cafile=endpoint.ssl_ca)
    except (OSError, ssl.SSLError) as exc:
        raise StoreError(f"cannot read the TLS CA file {endpoint.ssl_ca}: {exc}") from exc
    if not endpoint.ssl_verify:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    return context


def connect(endpoint: Endpoint, *, local_infile: bool = False) -> pymysql.Connection:
    """An autocommit connection (transactions are explicit BEGIN ... COMMIT)."""
    tls = {"ssl": tls_context(endpoint)} if endpoint.tls else {}
    try:
        return pymysql.connect(
            host=endpoint.host,
            port=endpoint.port,
            user=endpoint.user,
            password=endpoint.password,
            database=endpoint.database,
            charset="utf8mb4",
            autocommit=True,
            local_infile=local_infile,
            connect_timeout=10,
            **tls,
        )
    except pymysql.Error as exc:
        raise StoreError(f"cannot connect to {endpoint.describe()}: {exc}") from exc


def error_code(exc: BaseException) -> int | None:
    args = getattr(exc, "args", ())
    return args[0] if args and isinstance(args[0], int) else None


def is_transient(exc: BaseException) -> bool:
    if isinstance(exc, pymysql.err.InterfaceError):  # the connection was already closed
        return True
    if not isinstance(exc, pymysql.Error):
        return False
    code = error_code(exc)
    if code == SCHEMA_CHANGED[0]:
        return SCHEMA_CHANGED[1] in str(exc).lower()
    return code in TRANSIENT_CODES


def with_retries(
    work: Callable[[], T],
    *,
    on_retry: Callable[[BaseException], None],
    attempts: int = 6,
    base_delay: float = 0.05,
    max_delay: float = 2.0,
    sleep: Callable[[float], None] = time.sleep,
    once: frozenset[int] = frozenset(),
) -> T:
    """`work()`, run again after a transient error with exponential backoff and full jitter
    (so that writers that conflicted do not collide again in step). `on_retry` repairs
    state first (a new connection after a lost one). An error whose code is in `once` is
    retried the first time it occurs only."""
    seen_once: set[int] = set()
    for attempt in range(1, attempts + 1):
        try:
            return work()
        except Exception as exc:
            code = error_code(exc) if isinstance(exc, pymysql.Error) else None
            retry_once = code in once and code not in seen_once
            if attempt == attempts or not (is_transient(exc) or retry_once):
                raise
            if retry_once and code is not None:
                seen_once.add(code)
            delay = random.uniform(0, min(max_delay, base_delay * 2 ** (attempt - 1)))
            log.warning("transient error %s, retry %d in %.2fs", exc, attempt, delay)
            on_retry(exc)
            sleep(delay)
    raise AssertionError("unreachable")
