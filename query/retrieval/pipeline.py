"""The query pipeline: validate → expand → retrieve and fuse → CoRAG → rerank → pack.

`make_request` is the one validation shared by the CLI and the worker; `answer` runs a valid
request against a warm Engine. Optional services that fail (LLM, reranker, embedder) leave
a note and the answer goes on without them; notes starting with "degraded: " mark
something that was meant to run and did not (`--strict` makes those exit 1).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from functools import partial
from typing import Any, get_args

from pydantic import ValidationError

from core.store.contract import SchemaOutdated, UnknownIndex
from query.errors import UsageError
from query.retrieval.bridges import BRIDGE_SOURCES, linked_chunks
from query.retrieval.corag import bridge_hop
from query.retrieval.dedupe import dedupe_by_text
from query.retrieval.engine import Engine
from query.retrieval.pack import chunk_json, pack, shown_text
from query.retrieval.retrieve import Retriever
from query.retrieval.trace import Trace
from query.types import Candidate, QueryRequest, QueryResponse

MAX_VARIANTS = 5
REQUEST_FIELDS = tuple(QueryRequest.model_fields)


# Validation


def make_request(values: Mapping[str, Any]) -> QueryRequest:
    """A QueryRequest from CLI flags, a worker's JSON body or a tool call; None values mean
    "default". Raises UsageError naming the bad field (every unknown one at once)."""
    given = {k: v for k, v in values.items() if v is not None}
    try:
        return QueryRequest.model_validate(given)
    except ValidationError as exc:
        raise UsageError(_describe(exc)) from None


def _describe(exc: ValidationError) -> str:
    errors = exc.errors()
    unknown = sorted(str(e["loc"][0]) for e in errors if e["type"] == "extra_forbidden")
    if unknown:
        return f"unknown field(s) {', '.join(unknown)} (known: {', '.join(REQUEST_FIELDS)})"
    error = errors[0]
    name = str(error["loc"][0]) if error["loc"] else "request"
    value, kind, ctx = error.get("input"), error["type"], error.get("ctx") or {}
    if kind == "missing":
        return f"missing {name}"
    if kind == "value_error":
        return str(error["msg"]).removeprefix("Value error, ")
    if kind == "literal_error":
        choices = ", ".join(sorted(_choices(QueryRequest.model_fields[name].annotation)))
        return f"unknown {name} {value!r} (one of {choices})"
    if kind.startswith("int_"):
        return f"{name} must be an integer, got {value!r}"
    if kind.startswith("bool_"):
        return f"{name} must be true or false, got {value!r}"
    if kind == "greater_than_equal":
        return f"{name} must be at least {ctx['ge']}, got {value!r}"
    return f"{name}: {error['msg']} (got {value!r})"


def _choices(annotation: Any) -> list[str]:
    """The strings of a Literal, also inside Optional."""
    out: list[str] = []
    for arg in get_args(annotation):
        out += [arg] if isinstance(arg, str) else _choices(arg)
    return out


# The pipeline


def answer(request: QueryRequest, engine: Engine) -> QueryResponse:
    started = time.perf_counter()
    trace = Trace()
    if request.store is not None and not engine.serves(request.store):
        raise UsageError(
            f"this engine serves the store {engine.shown_location}, not {request.store}"
        )
    try:
        indexes = engine.resolve_indexes(request.indexes)
        engine.open_indexes(indexes)
    except (UnknownIndex, SchemaOutdated) as exc:  # an index to name right, or to migrate
        raise UsageError(str(exc)) from None
    if not indexes:
        trace.note(f"the store {engine.shown_location} holds no index; build one with flows.ingest")
        return _response([], 0, [request.query], None, trace, started)
    retriever = Retriever(engine, request, indexes, trace)
    variants = _variants(request, engine, retriever, trace)
    # The whole rows of the candidates this answer may show or read the text of: the top k,
    # and the first chunks whose text the link places are read from. CoRAG reads any.
    whole = None if request.corag else max(request.top_k, BRIDGE_SOURCES if request.links else 0)
    candidates = retriever.retrieve(variants, whole=whole)
    corag_trace = None
    if request.corag:
        with trace.stage("corag"):
            candidates, corag_trace = _corag(request, engine, retriever, candidates, trace)
    elif request.links:
        with trace.stage("links"):
            try:
                # Titles only: a code chunk uses dozens of declared names, and their
                # declarations took the places of answers (docs/evaluation.md, "Results").
                places = partial(linked_chunks, retriever, declarations=False)
                candidates, hop = bridge_hop(candidates, places)
            except Exception as exc:  # an optional stage: the results stand without links
                trace.degrade(f"link places failed ({exc}); results without links")
                hop = None
        if hop is not None:
            named = ", ".join(dict.fromkeys(link["name"] for link in hop.links))
            trace.note(f"links: {len(hop.links)} chunk(s) placed below the top results ({named})")
    with trace.stage("rerank"):
        candidates = _rerank(request, engine, retriever, candidates, trace)
    with trace.stage("pack"):
        # Whole already (`whole` above): a no-op unless a later stage reordered the list.
        candidates = retriever.fetch_head(candidates, request.top_k)
        packed = pack(
            candidates,
            engine.counter(),
            top_k=request.top_k,
            max_tokens=request.max_tokens,
            stored_usable=engine.stored_counts_usable,
        )
        chunks = [
            chunk_json(c, n) for c, n in zip(packed.candidates, packed.token_counts, strict=True)
        ]
    for note in packed.notes:
        trace.note(note)
    return _response(chunks, packed.total_tokens, variants, corag_trace, trace, started)


def _response(chunks, total, variants, corag_trace, trace: Trace, started) -> QueryResponse:
    paths = trace.paths_note()
    if paths:
        trace.note(paths)
    trace.timings["total"] = (time.perf_counter() - started) * 1000.0
    return QueryResponse(
        chunks=chunks,
        total_tokens=total,
        query_expansions=list(variants),
        corag_trace=corag_trace,
        timings_ms=trace.rounded_timings(),
        notes=list(trace.notes),
        fusion=trace.fusion,
    )


def _variants(
    request: QueryRequest, engine: Engine, retriever: Retriever, trace: Trace
) -> list[str]:
    """The original query first, then the expansions (unless --no-expand)."""
    if not request.expand:
        return [request.query]
    settings = engine.settings
    wanted = engine.llm() is not None or settings.deterministic_expansion
    feedback = retriever.feedback_texts(request.query) if retriever.has_bm25 and wanted else []
    with trace.stage("expand"):
        try:
            expansion = engine.expander()(
                request.query,
                llm=engine.llm(),
                domain=request.domain,
                frameworks=request.frameworks,
                feedback_texts=feedback,
                max_variants=MAX_VARIANTS,
                deterministic=settings.deterministic_expansion,
            )
        except Exception as exc:  # expansion is an optional service
            trace.degrade(f"query expansion failed ({exc}); searched the original query only")
            return [request.query]
    for note in expansion.notes:
        trace.note(note)
    texts = [str(v).strip() for v in expansion.variants if str(v).strip()]
    return list(dict.fromkeys([request.query, *texts]))[:MAX_VARIANTS]


def _corag(request, engine: Engine, retriever: Retriever, first, trace: Trace):
    """Follow-up hops, each a full hybrid retrieval of the hop's query (no expansion)."""
    try:
        gathered, hops, notes = engine.corag_runner()(
            request.query,
            lambda question: retriever.retrieve([question]),
            llm=engine.llm(),
            max_hops=engine.settings.corag_max_hops,
            first=first,
            bridges=partial(linked_chunks, retriever) if request.links else None,
        )
    except Exception as exc:
        trace.degrade(f"CoRAG failed ({exc}); single-pass results kept")
        return first, []
    for note in notes:
        trace.note(note)
    unique: dict[tuple[str, str], Candidate] = {}
    for cand in gathered:
        unique.setdefault(cand.key, cand)  # a chunk found again by a later hop stays once
    kept, _ = dedupe_by_text(list(unique.values()))
    hop_trace = [
        {
            "hop": number,
            "query": h.query,
            "new_chunk_ids": list(h.new_chunk_ids),
            "reason": h.reason,
            # Injected runners (tests, eval) may return hops without links.
            **({"links": list(h.links), "ms": h.ms} if getattr(h, "links", None) else {}),
        }
        for number, h in enumerate(hops, start=1)
    ]
    return kept, hop_trace


def _rerank(
    request: QueryRequest,
    engine: Engine,
    retriever: Retriever,
    candidates: list[Candidate],
    trace: Trace,
) -> list[Candidate]:
    """Rerank the top `rerank_candidates` against the original question. Scored candidates
    come first by reranker score (ties: fused order) and take it as their score; candidates
    the reranker did not score in its budget follow in fused order with their fused score,
    then everything beyond the reranked head."""
    if not request.rerank:
        trace.note("reranking off (--no-rerank); fused order kept")
        return candidates
    reranker, notes = engine.reranker()
    if reranker is None:
        configured = engine.settings.reranker_endpoint or engine.settings.reranker_model
        for note in notes or ["no reranker configured; fused order kept"]:
            (trace.degrade if configured else trace.note)(note)
        return candidates
    if not candidates:
        return candidates
    settings = engine.settings
    head, tail = candidates[: settings.rerank_candidates], candidates[settings.rerank_candidates :]
    head = retriever.fetch(head)  # the text of the candidates beyond the top k
    passages = [shown_text(c.row) for c in head]
    try:
        scores = engine.rerank_scores(request.query, passages, settings.rerank_budget_ms)
    except Exception as exc:
        trace.degrade(f"reranker failed ({exc}); fused order kept")
        return candidates
    if len(scores) != len(head):
        trace.degrade(f"reranker returned {len(scores)} scores for {len(head)} passages; ignored")
        return candidates
    scored = [(float(s), i) for i, s in enumerate(scores) if s is not None]
    if not scored:
        trace.degrade(f"reranker scored nothing within {settings.rerank_budget_ms} ms")
        return candidates
    if len(scored) < len(head):
        trace.note(
            f"reranker scored {len(scored)} of {len(head)} candidates within "
            f"{settings.rerank_budget_ms} ms; the rest keep their fused order below them"
        )
    scored.sort(key=lambda pair: (-pair[0], pair[1]))
    order = []
    for rank, (score, position) in enumerate(scored, start=1):
        cand = head[position]
        cand.ranks["rerank"], cand.score = rank, score
        order.append(cand)
    unscored = [c for c, s in zip(head, scores, strict=True) if s is None]
    return order + unscored + tail
