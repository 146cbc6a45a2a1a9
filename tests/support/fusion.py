"""Ranked lists and fused scores, as the fusion tests write them."""

from __future__ import annotations

from core.store.contract import Hit
from query.types import Candidate, RankedList


def ranked(
    signal: str, ids: list[str], index: str = "docs", variant: int = 0, scores=None
) -> RankedList:
    """Hits of `ids` in that order, scores descending from len(ids) unless given."""
    scores = scores or [float(len(ids) - i) for i in range(len(ids))]
    hits = [Hit(c, s) for c, s in zip(ids, scores, strict=True)]
    return RankedList.of_index(signal, index, variant, hits)


def scores_of(candidates: list[Candidate]) -> dict[str, float]:
    return {c.chunk_id: c.score for c in candidates}
