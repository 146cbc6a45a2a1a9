"""Where a TiDB store is: a `tidb://` (or `mysql://`) URL read over the TIDB_* settings.

`tidb://user:password@host:4000/database?ssl_ca=/path/ca.pem&ssl_verify=false&ssl=true`
overrides the settings field by field; `tidb://` alone means the settings. The one parse of
such a URL: `Dsn.parse` checks it (scheme, host, port, options) and keeps what it sets;
`Dsn.endpoint(settings)` is where to connect. No driver is imported here, so a command line
can check a `--store` URL without loading one.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import SplitResult, parse_qs, unquote, urlsplit

from core.settings import Settings
from core.store.errors import InvalidLocation

SCHEMES = ("tidb", "mysql")
OPTIONS = ("ssl", "ssl_ca", "ssl_verify")


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


@dataclass(frozen=True)
class Dsn:
    """A checked store URL: the Endpoint fields it sets, and its text without the password."""

    display: str
    fields: tuple[tuple[str, Any], ...] = ()

    @property
    def bare(self) -> bool:
        """`tidb://` alone: everything comes from the settings."""
        return not self.fields

    @classmethod
    def parse(cls, url: str) -> Dsn:
        """The URL's parts; InvalidLocation, naming the URL (never its password), when it
        cannot name a TiDB store."""
        parts = urlsplit(url)
        shown = _without_password(parts)
        if parts.scheme.lower() not in SCHEMES:
            raise InvalidLocation(
                f"store {shown!r}: not a store URL; use a directory, or tidb:// or mysql://"
            )
        if parts.netloc and not parts.hostname:
            raise InvalidLocation(f"store {shown!r}: no host (tidb://user@host:4000/database)")
        changes: dict[str, Any] = {}
        if parts.hostname:
            changes["host"] = parts.hostname
        try:
            if parts.port:
                changes["port"] = parts.port
        except ValueError:
            raise InvalidLocation(f"store {shown!r}: bad port (a number up to 65535)") from None
        if parts.username:
            changes["user"] = unquote(parts.username)
        if parts.password is not None:
            changes["password"] = unquote(parts.password)
        if parts.path.strip("/"):
            changes["database"] = unquote(parts.path.strip("/"))
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        unknown = set(query) - set(OPTIONS)
        if unknown:
            raise InvalidLocation(
                f"store {shown!r}: unknown tidb:// URL option(s) {sorted(unknown)}: use "
                f"{', '.join(OPTIONS)}"
            )
        if "ssl_ca" in query:
            changes["ssl_ca"] = query["ssl_ca"]
        for key in ("ssl_verify", "ssl"):
            if key in query:
                changes[key] = _flag(shown, key, query[key])
        return cls(display=shown, fields=tuple(changes.items()))

    def endpoint(self, settings: Settings) -> Endpoint:
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
        return replace(base, **dict(self.fields))


def endpoint_from(url: str, settings: Settings) -> Endpoint:
    """The URL's parts over the TIDB_* settings."""
    return Dsn.parse(url).endpoint(settings)


def _flag(shown: str, key: str, raw: str) -> bool:
    lowered = raw.lower()
    if lowered in {"1", "true", "yes", "on"}:
        return True
    if lowered in {"0", "false", "no", "off"}:
        return False
    raise InvalidLocation(f"store {shown!r}: URL option {key}={raw!r}: use true or false")


def without_password(url: str) -> str:
    """The URL with no password at all (`user@host`): what a child process's argv may
    carry, the password going by its environment instead (TIDB_PASSWORD)."""
    return _without_password(urlsplit(url), mask=None)


def _without_password(parts: SplitResult, mask: str | None = "***") -> str:
    """The URL as given, with `mask` for a password (messages and status show `***`), or
    with none at all."""
    if parts.password is None:
        return parts.geturl()
    user, _, host = parts.netloc.rpartition("@")
    name = user.split(":", 1)[0]
    netloc = f"{name}@{host}" if mask is None else f"{name}:{mask}@{host}"
    return parts._replace(netloc=netloc).geturl()
