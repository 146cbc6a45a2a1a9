"""What a store holds, index by index (what `python -m query status` and the MCP `index_status`
tool show).

For each index: its health (the store's consistency check: SQLite's integrity_check or
quick_check), documents, chunks, vectors, model and dimension, and whatever else the
backend reports (on TiDB the vector index's build progress from
INFORMATION_SCHEMA.TIFLASH_INDEXES, and whether BM25 runs natively or over postings).
A damaged index is listed with what the check found instead of its counts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from core.settings import Settings
from core.store.contract import StoreError
from core.store.open import open_store


def store_status(
    settings: Settings, location: str | None, names: Sequence[str] | None = None
) -> dict[str, Any]:
    """The status of every index of the store, or of those `names` only."""
    store = open_store(location, settings)
    indexes: dict[str, Any] = {}
    try:
        for name in sorted(store.list_indexes() if names is None else names):
            indexes[name] = _index_status(store, name)
    finally:
        close = getattr(store, "close", None)
        if close is not None:
            close()
    return {"store": str(getattr(store, "location", location or "")), "indexes": indexes}


def _index_status(store: Any, name: str) -> dict[str, Any]:
    problems = store.check_index(name)
    if problems:
        return {"health": "damaged", "problems": problems}
    try:
        handle = store.open_index(name)
        try:
            return {"health": "ok", **handle.stats()}
        finally:
            handle.close()
    except StoreError as exc:
        return {"health": "unreadable", "problems": [str(exc)]}


def damaged(status: dict[str, Any]) -> list[str]:
    """Names of the indexes whose check failed."""
    return [n for n, s in status["indexes"].items() if s.get("health") != "ok"]
