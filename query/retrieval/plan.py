"""Which signal may run on which index for one request: an index that cannot be opened, holds
no vectors of the query model's (or of a precision that may not mix with the query's), or
has an empty full-text table is searched without that signal, and the trace says why. An
index whose vectors are still being filled in (an ingest loads chunks first and embeds them
after) is searched by vector over the chunks that have one, and the trace says how much of
it that is; keyword search covers every chunk either way."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from core.embedding.models import model_spec
from core.embedding.precision import precision_label, shares_index_with
from core.store.contract import IndexStore, precisions_of
from core.store.coverage import pending_of, percent
from query.retrieval.engine import Engine
from query.retrieval.trace import Trace

MODE_SIGNALS = {"hybrid": ("vector", "bm25"), "vector": ("vector",), "bm25": ("bm25",)}


class Plan(dict[str, set[str]]):
    """Index name → the signals it can serve; `embedding`: the indexes whose vector leg runs
    while some of their chunks still wait for a vector (or whose store cannot count them),
    the only ones fusion asks which of its candidates lack one: on TiDB that question is a
    round trip per query."""

    def __init__(self, names: Sequence[str]) -> None:
        super().__init__({name: set() for name in names})
        self.embedding: set[str] = set()


def plan_signals(
    engine: Engine, wanted: Sequence[str], indexes: Sequence[str], trace: Trace
) -> Plan:
    """Index name → the signals of `wanted` it can serve."""
    plan = Plan(indexes)
    held: dict[str, _Held] = {}
    for name in indexes:
        try:
            with engine.checkout(name) as index:
                held[name] = _held(index)
        except Exception as exc:  # one broken index must not sink the others
            trace.degrade(f"index {name!r} skipped: it cannot be opened: {exc}")
    embedder = None
    # The model loads only for an index with vectors to search: a question on a corpus
    # still in its keyword phase answers without waiting for it.
    if "vector" in wanted and any(h.may_hold_vectors for h in held.values()):
        embedder = _embedder(engine, trace)
    for name, h in held.items():
        chunks = _count(h.stats, "chunks")
        if chunks == 0:
            trace.note(f"index {name!r} holds no chunks")
        if "bm25" in wanted:
            if chunks and _count(h.stats, "fts_rows", "fts") == 0:
                trace.degrade(f"BM25 skipped on index {name!r}: its full-text table is empty")
            else:
                plan[name].add("bm25")
        if "vector" not in wanted:
            continue
        if not h.may_hold_vectors:
            if chunks != 0:
                trace.degrade(f"vector search skipped on index {name!r}: {_no_vectors(name, h)}")
            continue
        if embedder is None:
            continue  # said once for every index when the embedder failed to load
        problem = vector_problem(embedder, h.model_id, h.dim, h.stats)
        if problem:
            trace.degrade(f"vector search skipped on index {name!r}: {problem}")
            continue
        plan[name].add("vector")
        pending, total = pending_of(h.stats)
        if pending or _count(h.stats, "vectors") is None:
            plan.embedding.add(name)
        if pending and _count(h.stats, "vectors") is not None:
            rest = (
                "keyword results complete"
                if "bm25" in plan[name]
                else "the chunks without one are not searched"
            )
            trace.note(
                f"vectors cover {percent(pending, total)} of index {name!r} (embedding in "
                f"progress: {pending:,} of {total:,} chunks wait; {rest})"
            )
    return plan


@dataclass(frozen=True)
class _Held:
    """What an index holds, read once per request."""

    model_id: str | None
    dim: int | None
    stats: dict[str, Any]

    @property
    def may_hold_vectors(self) -> bool:
        """False when the index surely holds none (a store that cannot count may)."""
        return self.model_id is not None and _count(self.stats, "vectors") != 0


def _held(index: IndexStore) -> _Held:
    stats = _stats(index)
    if "model_id" in stats and "dim" in stats:  # on TiDB each property is a round trip
        return _Held(stats["model_id"], stats["dim"], stats)
    return _Held(index.model_id, index.dim, stats)


def _embedder(engine: Engine, trace: Trace) -> Any | None:
    with trace.stage("embed"):  # the first request of a process loads the model
        embedder, why = engine.embedder()
    if embedder is None:
        trace.degrade(f"vector search skipped on every index: {why}")
    for note in getattr(embedder, "notes", None) or ():
        trace.note(note)  # e.g. a dead endpoint replaced by the same local model
    return embedder


def _no_vectors(name: str, h: _Held) -> str:
    """Why an index with chunks has no vectors to search: none were ever bound, or its
    chunks wait for the vector phase."""
    chunks = _count(h.stats, "chunks")
    if h.model_id is None or not chunks:
        return "the index holds no vectors"
    return (
        f"its vectors are pending (none of its {chunks:,} chunks is embedded yet; keyword "
        f"results complete; `rag-retrieve embed --index {name}` embeds them)"
    )


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
