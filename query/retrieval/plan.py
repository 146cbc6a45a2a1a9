"""Which signal may run on which index for one request: an index that cannot be opened, holds
no vectors of the query model's (or of a precision that may not mix with the query's), or
has an empty full-text table is searched without that signal, and the trace says why."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from core.embedding.models import model_spec
from core.embedding.precision import precision_label, shares_index_with
from core.store.contract import IndexStore, precisions_of
from query.retrieval.engine import Engine
from query.retrieval.trace import Trace

MODE_SIGNALS = {"hybrid": ("vector", "bm25"), "vector": ("vector",), "bm25": ("bm25",)}


def plan_signals(
    engine: Engine, wanted: Sequence[str], indexes: Sequence[str], trace: Trace
) -> dict[str, set[str]]:
    """Index name → the signals of `wanted` it can serve."""
    embedder = None
    if "vector" in wanted:
        with trace.stage("embed"):  # the first request of a process loads the model
            embedder, why = engine.embedder()
        if embedder is None:
            trace.degrade(f"vector search skipped on every index: {why}")
        for note in getattr(embedder, "notes", None) or ():
            trace.note(note)  # e.g. a dead endpoint replaced by the same local model
    plan: dict[str, set[str]] = {}
    for name in indexes:
        plan[name] = set()
        try:
            with engine.checkout(name) as index:
                model_id, dim, stats = index.model_id, index.dim, _stats(index)
        except Exception as exc:  # one broken index must not sink the others
            trace.degrade(f"index {name!r} skipped: it cannot be opened: {exc}")
            continue
        chunks = _count(stats, "chunks")
        if chunks == 0:
            trace.note(f"index {name!r} holds no chunks")
        if "vector" in wanted and embedder is not None:
            problem = vector_problem(embedder, model_id, dim, stats)
            if problem and chunks != 0:
                trace.degrade(f"vector search skipped on index {name!r}: {problem}")
            elif not problem:
                plan[name].add("vector")
        if "bm25" in wanted:
            if chunks and _count(stats, "fts_rows", "fts") == 0:
                trace.degrade(f"BM25 skipped on index {name!r}: its full-text table is empty")
            else:
                plan[name].add("bm25")
    return plan


def _stats(index: IndexStore) -> dict[str, Any]:
    try:
        stats = index.stats()
    except Exception:
        return {}
    return stats if isinstance(stats, dict) else {}


def _count(stats: dict[str, Any], *keys: str) -> int | None:
    for key in keys:
        value = stats.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def vector_problem(embedder: Any, model_id: str | None, dim: int | None, stats: dict) -> str:
    if model_id is None or _count(stats, "vectors") == 0:
        return "the index holds no vectors"
    if model_id != embedder.model_id:
        return (
            f"the index was built with model {model_id!r} but the query embedder is "
            f"{embedder.model_id!r}"
        )
    if dim is not None and getattr(embedder, "dim", dim) != dim:
        return f"the index has {dim}-dimensional vectors, the query embedder {embedder.dim}"
    held = set(precisions_of(stats.get("embedding_precision")))
    precision = getattr(embedder, "precision", "fp32")
    label = precision_label(precision)
    if label not in held and not held <= shares_index_with(model_spec(model_id), precision):
        return (
            f"the index holds {'+'.join(sorted(held))} vectors and the query embedder runs "
            f"{label}; precisions mix only when each held the model's quality guard "
            f"(set RAG_EMBEDDING_PRECISION={sorted(held)[0].split(':')[0]})"
        )
    return ""
