"""Calibration as the last step of an ingest (flows/ingest_flow.py): only when the index is
new or has changed materially since its last calibration (`needs_calibration`), so an
incremental run that touched a few files costs one meta read."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from core.settings import Settings
from core.store.modes import LONG_LIVED
from core.store.open import open_store
from query.calibration.calibrate import calibrate_index, needs_calibration

# The share of chunks with a vector from which an index is calibrated: after its vector phase,
# short of the few chunks a model may give no usable vector (loaders/vectors.py).
COVERED = 0.99


def calibrate_if_changed(
    settings: Settings,
    store: str | None,
    index_name: str,
    *,
    log: Callable[[str], object],
    embedder: Any = None,
) -> dict[str, Any] | None:
    """The new calibration of `index_name` as JSON-ready data, or None when none was due, the
    index's vectors are still being filled in (`rag-retrieve embed` calibrates once they
    are), or calibration is switched off by RAG_FUSION_CALIBRATION."""
    if not settings.fusion_calibration:
        return None
    opened = open_store(store, settings, modes=LONG_LIVED)
    index = opened.open_index(index_name, write=True)  # it records the calibration
    try:
        stats = index.stats()
        chunks = int(stats.get("chunks") or 0)
        if int(stats.get("vectors") or 0) < COVERED * chunks:
            return None  # vectors still filling in: the vector leg would be judged on a part
        if not needs_calibration(index.fusion_calibration(), chunks):
            return None
        if embedder is None:
            from core.embedding.runtimes import load_embedder

            embedder = load_embedder(settings)
        found = calibrate_index(
            index,
            embedder,
            depth=settings.candidates_per_signal,
            rrf_k=settings.rrf_k,
            log=log,
            cache_file=settings.embedding_cache_file,
        )
        return {
            "rule": found.rule,
            "floor": found.floor,
            "pairs": found.pairs,
            "reason": found.reason,
        }
    finally:
        index.close()
