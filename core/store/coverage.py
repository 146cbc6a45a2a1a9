"""How much of an index has vectors: chunks are loaded first and embedded after (an
ingest's two phases), so an index answers keyword questions while part or none of it has
vectors. One reading of an index's `stats()` for the ingest summary, the query notes, the
status listing and the doctor."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any


def pending_of(stats: Mapping[str, Any]) -> tuple[int, int]:
    """(chunks without a vector, chunks) from an index's `stats()`."""
    chunks = int(stats.get("chunks") or 0)
    return max(chunks - int(stats.get("vectors") or 0), 0), chunks


def coverage(pending: int, chunks: int) -> float:
    """The share of an index's chunks that have a vector, to 4 places (1.0 for an empty
    index). Rounded down, so that 1.0 means nothing is pending."""
    if not chunks:
        return 1.0
    return math.floor((chunks - pending) / chunks * 10_000) / 10_000


def percent(pending: int, chunks: int) -> str:
    """The coverage as people read it, "37%": rounded down, so a nearly embedded index says
    99% until its last chunk has a vector, and one with a few vectors says "under 1%"."""
    whole = math.floor(coverage(pending, chunks) * 100)
    return "under 1%" if whole == 0 and pending < chunks else f"{whole}%"
