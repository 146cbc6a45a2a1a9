"""Connections to TiDB (or MariaDB standing in for it): where, TLS, and retrying transient errors.

`tidb://user:password@host:4000/database?ssl_ca=/path/ca.pem&ssl_verify=false&ssl=true`
overrides the TIDB_* settings field by field; `tidb://` alone means the settings.
"""

from __future__ import annotations

import logging
import random
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, TypeVar
from urllib.parse import parse_qs, unquote, urlsplit

import pymysql

from core.settings import Settings
from core.store.contract import StoreError

log = logging.getLogger(__name__)
T = TypeVar("T")

# Errors after which the same work, run again from the start, can succeed:
#   9007 write conflict (optimistic transactions), 8002/8022 "can not retry select for update" /
#   transaction retry, 9001/9002/9003/9005 PD/TiKV server timeout or busy, 8027 schema
#   outdated, 1205 lock wait timeout, 1213 deadlock, 2006 server gone away, 2013 lost
#   connection during query, 2003 cannot connect (restarting node), 1040 too many connections.
TRANSIENT_CODES = frozenset(
    {9007, 8002, 8022, 9001, 9002, 9003, 9005, 8027, 1205, 1213, 2006, 2013, 2003, 1040}
)
# The connection itself is gone: retrying needs a new one.
RECONNECT_CODES = frozenset({2006, 2013, 2003})


@dataclass(frozen=True)
class Endpoint:
    host: str
    port: int
    user: str
    password: str
    database: str
    ssl_ca: str | None = None
    ssl_verify: bool = True
    ssl: bool = False

    @property
    def tls(self) -> bool:
        return self.ssl or self.ssl_ca is not None

    def describe(self) -> str:
        """host:port/db, never the password."""
        return f"{self.host}:{self.port}/{self.database}"


def endpoint_from(url: str, settings: Settings) -> Endpoint:
    """The URL's parts over the TIDB_* settings."""
    base = Endpoint(
        host=settings.tidb_host or "127.0.0.1",
        port=settings.tidb_port,
        user=settings.tidb_user,
        password=settings.tidb_password,
        database=settings.tidb_database,
        ssl_ca=settings.tidb_ssl_ca,
        ssl_verify=settings.tidb_ssl_verify,
        ssl=settings.tidb_ssl,
    )
    parts = urlsplit(url)
    if parts.scheme not in {"tidb", "mysql"}:
        raise StoreError(f"not a tidb:// URL: {url!r}")
    changes: dict[str, Any] = {}
    if parts.hostname:
        changes["host"] = parts.hostname
    try:
        if parts.port:
            changes["port"] = parts.port
    except ValueError:
        raise StoreError(f"bad port in {parts.netloc!r}") from None
    if parts.username:
        changes["user"] = unquote(parts.username)
    if parts.password is not None:
        changes["password"] = unquote(parts.password)
    if parts.path.strip("/"):
        changes["database"] = unquote(parts.path.strip("/"))
    query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
    unknown = set(query) - {"ssl_ca", "ssl_verify", "ssl"}
    if unknown:
        raise StoreError(
            f"unknown tidb:// URL option(s) {sorted(unknown)}: use ssl, ssl_ca, ssl_verify"
        )
    if "ssl_ca" in query:
        changes["ssl_ca"] = query["ssl_ca"]
    for key in ("ssl_verify", "ssl"):
        if key in query:
            changes[key] = _flag(key, query[key])
    return replace(base, **changes)


def _flag(key: str, raw: str) -> bool:
    lowered = raw.lower()
    if lowered in {"1", "true", "yes", "on"}:
        return True
    if lowered in {"0", "false", "no", "off"}:
        return False
    raise StoreError(f"tidb:// URL option {key}={raw!r}: use true or false")


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
    return isinstance(exc, pymysql.Error) and error_code(exc) in TRANSIENT_CODES


def with_retries(
    work: Callable[[], T],
    *,
    on_retry: Callable[[BaseException], None],
    attempts: int = 6,
    base_delay: float = 0.05,
    max_delay: float = 2.0,
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """`work()`, run again after a transient error with exponential backoff and full jitter
    (so that writers that conflicted do not collide again in step). `on_retry` repairs
    state first (a new connection after a lost one)."""
    for attempt in range(1, attempts + 1):
        try:
            return work()
        except Exception as exc:
            if attempt == attempts or not is_transient(exc):
                raise
            delay = random.uniform(0, min(max_delay, base_delay * 2 ** (attempt - 1)))
            log.warning("transient error %s, retry %d in %.2fs", exc, attempt, delay)
            on_retry(exc)
            sleep(delay)
    raise AssertionError("unreachable")
