"""Where a store is, parsed once: a local directory (embedded SQLite) or a TiDB server.

`StoreLocation.parse(text)` reads what a user names with `--store`: a URL (`scheme://...`)
must be a `tidb://` or `mysql://` one (core/store/tidb/dsn.py checks it: host, port,
options), anything else is a directory. `StoreLocation.of(text_or_none, settings)` also
reads the configured default: TiDB when TIDB_HOST is set, else RAG_INDEX_DIR. Every
"is this store remote?" asks `is_remote`; messages show `display`, which never holds a
password; a child process's argv takes `without_password`, its environment the `password`. Neither numpy nor a database driver is imported: the CLI checks `--store` before
it decides whether to load them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from core.settings import Settings
from core.store.errors import InvalidLocation
from core.store.tidb.dsn import Dsn, Endpoint, without_password

# `scheme://` as RFC 3986 spells a scheme; a Windows drive (`C:\`) is no URL.
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


@dataclass(frozen=True)
class StoreLocation:
    """A store directory (`directory`) or a TiDB URL (`dsn`); `text` as it was named."""

    text: str
    directory: Path | None = None
    dsn: Dsn | None = None

    @classmethod
    def parse(cls, value: str | Path | StoreLocation) -> StoreLocation:
        """`value` as a location; InvalidLocation (naming it) for a URL that is not a store's."""
        if isinstance(value, StoreLocation):
            return value
        text = str(value)
        if "\0" in text:  # no file system names one; os calls would raise a bare ValueError
            raise InvalidLocation(f"store {text!r}: a NUL character names no folder or server")
        if isinstance(value, str) and _URL.match(text):
            return cls(text=text, dsn=Dsn.parse(text))
        return cls(text=text, directory=Path(text))

    @classmethod
    def of(cls, value: str | Path | StoreLocation | None, settings: Settings) -> StoreLocation:
        """`value`, or when it is None the configured store: TiDB (`tidb://`, the TIDB_*
        settings) when TIDB_HOST is set, else the directory RAG_INDEX_DIR."""
        if value is not None:
            return cls.parse(value)
        return cls.parse("tidb://" if settings.tidb_host else settings.index_dir)

    @property
    def is_remote(self) -> bool:
        return self.dsn is not None

    @property
    def display(self) -> str:
        """The location as named, never with its password."""
        return self.dsn.display if self.dsn is not None else self.text

    @property
    def password(self) -> str | None:
        """The password a TiDB URL names itself, if it does."""
        return None if self.dsn is None else dict(self.dsn.fields).get("password")

    @property
    def without_password(self) -> str:
        """The location as named but for a URL's password: what a child process may be
        given on its command line (which `ps` shows), the password going apart."""
        return self.text if self.password is None else without_password(self.text)

    def endpoint(self, settings: Settings) -> Endpoint:
        """Where a remote store's server is: the URL over the TIDB_* settings."""
        if self.dsn is None:
            raise InvalidLocation(f"store {self.text!r} is a directory, not a TiDB server")
        return self.dsn.endpoint(settings)

    def same_as(self, other: StoreLocation) -> bool:
        """Whether both name one store: directories compared resolved, URLs as written
        (but for a trailing slash); a directory is never a server."""
        if self.directory is not None and other.directory is not None:
            return self.directory.resolve() == other.directory.resolve()
        return (
            self.is_remote and other.is_remote and self.text.rstrip("/") == other.text.rstrip("/")
        )

    def __str__(self) -> str:
        return self.display
