"""What a store holds, index by index (what `python -m query status` and the MCP `index_status`
tool show).

For each index: its health (the store's consistency check: SQLite's integrity_check or
quick_check), documents, chunks, vectors, the share of chunks with a vector and the number
still waiting for one (`vector_coverage`, `chunks_pending`: chunks are loaded first and
embedded after), model and dimension, the paths its searches take (`keyword_path`,
`vector_path`: for SQLite those of the modes the store was opened with, for TiDB the index's
own; core/store/modes.py), the fusion rule `auto` takes on it (`fusion`, with the
calibration behind it; query/calibration), and whatever else the backend reports (on TiDB
the vector index's build progress from INFORMATION_SCHEMA.TIFLASH_INDEXES). A damaged index
is listed with what the check found instead of its counts; an index older than the code is
listed as `outdated`, with what `rag-retrieve migrate` would do (nothing here writes to it).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from core.settings import Settings
from core.store.contract import SchemaOutdated, Store, StoreError
from core.store.coverage import coverage, pending_of
from core.store.location import StoreLocation
from core.store.modes import ONE_SHOT
from core.store.open import open_store
from query.retrieval.rules import UNCALIBRATED_RULE, calibrated_rule


def store_status(
    settings: Settings, location: str | None, names: Sequence[str] | None = None
) -> dict[str, Any]:
    """The status of every index of the store, or of those `names` only, opened as a
    one-shot command opens it (so the paths are those `python -m query "..."` takes)."""
    store = open_store(location, settings, modes=ONE_SHOT)
    try:
        return status_of(store, names)
    finally:
        close = getattr(store, "close", None)
        if close is not None:
            close()


def status_of(store: Store, names: Sequence[str] | None = None) -> dict[str, Any]:
    """The same of a store already open (the MCP server's: its paths are the server's)."""
    indexes: dict[str, Any] = {}
    for name in sorted(store.list_indexes() if names is None else names):
        indexes[name] = _index_status(store, name)
    return {"store": StoreLocation.parse(str(store.location)).display, "indexes": indexes}


def _index_status(store: Any, name: str) -> dict[str, Any]:
    problems = store.check_index(name)
    if problems:
        return {"health": "damaged", "problems": problems}
    try:
        handle = store.open_index(name)
        try:
            stats = handle.stats()
            return {"health": "ok", **stats, **_coverage(stats), "fusion": _fusion(handle)}
        finally:
            handle.close()
    except SchemaOutdated as exc:  # sound, but for a writer to upgrade first
        return {"health": OUTDATED, "problems": [str(exc)]}
    except StoreError as exc:
        return {"health": "unreadable", "problems": [str(exc)]}


def _coverage(stats: dict[str, Any]) -> dict[str, Any]:
    """How much of the index has vectors: chunks wait for theirs while an ingest's vector
    phase (or `rag-retrieve embed`) runs, and are searched by keyword meanwhile."""
    pending, chunks = pending_of(stats)
    return {"vector_coverage": coverage(pending, chunks), "chunks_pending": pending}


def _fusion(handle: Any) -> dict[str, Any]:
    """The rule `auto` fusion takes on this index, and the calibration behind it."""
    read = getattr(handle, "fusion_calibration", None)
    record = read() if read is not None else None
    rule = calibrated_rule(record)
    if rule is None:
        return {"rule": UNCALIBRATED_RULE, "calibrated": False}
    found = json.loads(str(record))
    return {"rule": rule, "calibrated": True, **{k: found.get(k) for k in _CALIBRATION_KEYS}}


_CALIBRATION_KEYS = (
    "at",
    "chunks",
    "pairs",
    "mrr",
    "gain",
    "gain_low",
    "gain_high",
    "decided_by",
    "floor",
    "usage_floor",
)


# The health of an index that only needs `rag-retrieve migrate`.
OUTDATED = "outdated"


def damaged(status: dict[str, Any]) -> list[str]:
    """Names of the indexes whose check failed."""
    return [n for n, s in status["indexes"].items() if s.get("health") not in ("ok", OUTDATED)]


def outdated(status: dict[str, Any]) -> list[str]:
    """Names of the indexes a writer has still to migrate."""
    return [n for n, s in status["indexes"].items() if s.get("health") == OUTDATED]
