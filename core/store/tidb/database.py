"""What a TiDB index needs of the store that opened it, as a protocol: the index module need
not import the store module (which imports it to open indexes)."""

from __future__ import annotations

from typing import Any, Protocol

from core.settings import Settings
from core.store.tidb.search import VectorPlan
from core.store.tidb.sql import Server


class Database(Protocol):
    display: str  # for messages: never the password
    server: Server
    settings: Settings
    staging_dir: str | None
    vector_plan: VectorPlan
    version: str

    def connect(self) -> Any:
        """A new connection to the store's database."""
