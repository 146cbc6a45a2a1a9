"""Search-side pieces of the TiDB store that need no server: the vector over-fetch plan and
the query vector's SQL literal. Fusion is not the store's: query.retrieval.fusion does it for all."""

from __future__ import annotations

from enum import Enum

import numpy as np

# pytidb's post-filter default (limit * 10), never below 100 rows.
FETCH_FACTOR = 10
MIN_FETCH = 100
WIDEN_FACTOR = 4
# Past this many over-fetched rows, an exact scan of the admitted rows is cheaper than
# walking further down the HNSW graph for a filter that admits almost nothing.
MAX_FETCH = 10_000


class VectorPlan(Enum):
    """How vector candidates are found. AUTO = ANN when the index has an HNSW index."""

    AUTO = "auto"
    ANN = "ann"  # over-fetch through the ANN query shape, filter outside, widen, then exact
    EXACT = "exact"  # exact filtered scan


def fetch_sizes(k: int, total: int) -> list[int]:
    """The over-fetch sizes to try, in order, before an exact filtered scan. A size that
    reaches `total` reads every row, so its answer is already exact and ends the list."""
    if k <= 0 or total <= 0:
        return []
    sizes = []
    size = max(k * FETCH_FACTOR, MIN_FETCH)
    while size <= MAX_FETCH:
        if size >= total:
            sizes.append(total)
            break
        sizes.append(size)
        size *= WIDEN_FACTOR
    return sizes


def vector_literal(query: np.ndarray, dim: int) -> str:
    """The query as TiDB vector text, L2-normalised like the stored vectors."""
    vec = np.asarray(query, dtype=np.float32).reshape(-1)
    if vec.size != dim:
        raise ValueError(f"query has {vec.size} dimensions, the index {dim}")
    norm = float(np.linalg.norm(vec))
    if norm > 0:
        vec = vec / norm
    return "[" + ",".join(repr(float(x)) for x in vec.astype(np.float32)) + "]"
