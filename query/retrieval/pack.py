"""Packing the ranked chunks into a token budget, and their JSON form.

Rule: keep the top-k chunks in rank order, then drop chunks from the bottom until the sum
of their token counts fits --max-tokens. A later, smaller chunk never jumps over a dropped
larger one: the result is always a prefix of the ranking, so a budget never reorders or
cherry-picks. If even the top chunk is over budget, nothing is returned (with a note).

A chunk costs the tokens of what is shown to the reader: its context line, a newline, then
its content (the text the index embedded), counted with the engine's real tokenizer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from query.retrieval.fusion import IMPUTED
from query.types import Candidate


class Counter(Protocol):
    def count_many(self, texts: list[str]) -> list[int]: ...


def shown_text(row: dict[str, Any]) -> str:
    context, content = row.get("context") or "", row.get("content") or ""
    return f"{context}\n{content}" if context else content


@dataclass
class Packed:
    candidates: list[Candidate]
    token_counts: list[int]
    total_tokens: int
    dropped: int = 0
    notes: list[str] = field(default_factory=list)


def shown_token_counts(
    candidates: Sequence[Candidate], counter: Counter, stored_usable: Callable[[str], bool]
) -> list[int]:
    """Tokens of each candidate's shown text. A chunk's stored `token_count` is its content's
    count; where `stored_usable(index)` says it is the counter's own and counts add up
    across whitespace, only the context is tokenized: tokenizing ten contents was ~5 ms of
    each query (1.5 KB each at ~3 MB/s), tokenizing ten context lines is ~0.1 ms."""
    usable = {index: stored_usable(index) for index in {c.index for c in candidates}}
    counts: list[int | None] = []
    fresh: list[str] = []
    for cand in candidates:
        stored = cand.row.get("token_count")
        if usable[cand.index] and isinstance(stored, int) and cand.row.get("content"):
            counts.append(stored)
            fresh.append(cand.row.get("context") or "")
        else:
            counts.append(None)
            fresh.append(shown_text(cand.row))
    extra = counter.count_many(fresh)
    return [n + m if n is not None else m for n, m in zip(counts, extra, strict=True)]


def pack(
    candidates: Sequence[Candidate],
    counter: Counter,
    *,
    top_k: int,
    max_tokens: int | None,
    stored_usable: Callable[[str], bool] = lambda index: False,
) -> Packed:
    top = list(candidates[:top_k])
    counts = shown_token_counts(top, counter, stored_usable)
    keep = len(top)
    if max_tokens is not None:
        while keep and sum(counts[:keep]) > max_tokens:
            keep -= 1
    packed = Packed(top[:keep], counts[:keep], sum(counts[:keep]), dropped=len(top) - keep)
    if packed.dropped:
        if keep == 0:
            packed.notes.append(
                f"the top chunk alone has {counts[0]} tokens, over --max-tokens {max_tokens}; "
                "nothing returned"
            )
        else:
            packed.notes.append(
                f"{packed.dropped} lower-ranked chunk(s) dropped to fit --max-tokens {max_tokens}"
            )
    return packed


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(float(value), 6)


def chunk_json(cand: Candidate, token_count: int) -> dict[str, Any]:
    """One result as the JSON output shows it."""
    row = cand.row
    return {
        "chunk_id": cand.chunk_id,
        "doc_id": row.get("doc_id"),
        "content": row.get("content") or "",
        "context": row.get("context") or "",
        "source": row.get("source"),
        "path": row.get("path"),
        "index": cand.index,
        "domain": row.get("domain"),
        "chunk_type": row.get("chunk_type"),
        "symbol": row.get("symbol"),
        "ios_version_min": row.get("ios_version_min"),
        "ios_version_max": row.get("ios_version_max"),
        "swift_version": row.get("swift_version"),
        "framework_tags": list(row.get("framework_tags") or []),
        "deprecated": bool(row.get("deprecated")),
        "deprecated_in": row.get("deprecated_in"),
        "score": round(float(cand.score), 6),
        "ranks": {s: cand.ranks.get(s) for s in ("vector", "bm25", "rerank")},
        # Per signal: the chunk's best rank over the query variants, its raw score there, and
        # what the signal added to the fused score; for a chunk without a vector yet, what it
        # counts for the vector leg (vector_imputed, query/retrieval/fusion.py).
        "signals": {
            s: {
                "rank": cand.ranks.get(s),
                "score": _rounded(cand.signal_scores.get(s)),
                "contribution": _rounded(cand.contributions.get(s)),
            }
            for s in ("vector", "bm25", IMPUTED)
            if cand.ranks.get(s) is not None or s in cand.contributions
        },
        "linked_from": dict(cand.linked_from) if cand.linked_from else None,
        "start_line": row.get("start_line"),
        "end_line": row.get("end_line"),
        "title": row.get("title"),
        "url": row.get("url"),
        "token_count": token_count,
    }
