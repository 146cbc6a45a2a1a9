"""The store's errors, apart from the contract (which imports numpy and pyarrow), so that
a command line can tell a bad `--store` from a good one before it loads either."""

from __future__ import annotations


class StoreError(RuntimeError):
    """A store cannot be opened or written; the message names the path or server."""


class InvalidLocation(StoreError):
    """The caller named something that cannot be a store or an index: an index name outside
    the allowed characters, a store path that is a file, a URL that is not a store's. A usage
    error, not a failure."""


class SchemaOutdated(StoreError):
    """A handle that only reads met an index written by an older version of this code:
    `rag-retrieve migrate` (or an ingest) upgrades it. A usage error at a command line
    (exit 2): nothing failed, the user has a step to take."""
