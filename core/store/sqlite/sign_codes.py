"""One bit per dimension (the sign) of every stored vector, for a shortlist that exact
scores then rank: vector search over a large index without scoring every row.

Exact search reads all n × dim floats per query (100k × 384: ~8 ms, 1M: ~75–100 ms on this
2-core box). The sign codes are 1/32 of that; their Hamming distance to the query's code
orders the rows roughly by angle, so the true top ten sit in a short head of that order:
on 27k MiniLM vectors of the four dev corpora, re-scoring the nearest 2 % by Hamming
distance finds 99.6 % of the exact top ten (bench/README.md, *Vector search*). Distances and the
shortlist's exact scores come from faiss's kernels: at 1M rows they were 19 of the vector
leg's 19.4 ms in numpy (XOR + popcount per word, then copying the shortlist's rows out).

Filters are applied to the distances before the shortlist is cut, so a restrictive filter
shortens the list it is cut from instead of emptying the result (no post-filter starvation).
"""

from __future__ import annotations

from typing import Any

import numpy as np

# Which indexes get codes is the store's mode (core/store/modes.py, SHORTLIST_FROM rows).
# The shortlist: at least SHORTLIST_MIN rows, else this share of the admitted rows (recall
# depends on the shortlist's length more than on its share; 1,000 of 27k: 99.8 %).
SHORTLIST_MIN = 1_000
SHORTLIST_SHARE = 0.02
# A shortlist pays only when it is this many times shorter than the rows it is cut from.
SHORTLIST_SHARE_OF_WORK = 4


def _faiss() -> Any:
    # Imported on first use: a one-shot CLI query over a small index never needs it.
    import faiss

    # One thread: on a small shared machine the hand-off costs more than it saves, and the
    # other cores stay free for concurrent queries (the same reason as vectors._dot).
    faiss.omp_set_num_threads(1)
    return faiss


def sign_codes(matrix: np.ndarray) -> np.ndarray:
    """(n, bytes) uint8: bit j of row i is set when matrix[i, j] > 0, padded with zero bits
    to a whole number of 64-bit words (faiss's fast Hamming kernels work on words)."""
    n, dim = matrix.shape
    width = -(-dim // 64) * 64
    padded = np.zeros((n, width), dtype=bool)
    padded[:, :dim] = matrix > 0
    return np.packbits(padded, axis=1)


def hamming(codes: np.ndarray, query: np.ndarray) -> np.ndarray:
    """int32 Hamming distance of every row's code to the code of `query` (a dim vector).
    faiss's SIMD kernel: 1M codes of 384 bits in ~4.5 ms, numpy's XOR + popcount per word
    ~6.3 ms (bench/vectors.py)."""
    faiss = _faiss()
    mine = np.ascontiguousarray(sign_codes(query.reshape(1, -1)))
    n, width = codes.shape
    distance = np.empty(n, dtype=np.int32)
    if n:
        faiss.hammings(
            faiss.swig_ptr(mine), faiss.swig_ptr(codes), 1, n, width, faiss.swig_ptr(distance)
        )
    return distance


def rescore(
    matrix: np.ndarray, query: np.ndarray, rows: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray]:
    """The k of `rows` (ascending positions) with the highest inner product with `query`:
    (rows, scores), best first, ties by position. Read in place by faiss: copying 20k rows
    out of a 1M matrix to score them took ~10 ms, as long as the scoring of all 1M."""
    faiss = _faiss()
    k = min(k, rows.size)
    if k <= 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    subset = np.ascontiguousarray(rows, dtype=np.int64).reshape(1, -1)
    vector = np.ascontiguousarray(query, dtype=np.float32).reshape(1, -1)
    scores = np.empty((1, k), dtype=np.float32)
    found = np.empty((1, k), dtype=np.int64)
    n, dim = matrix.shape
    faiss.knn_inner_products_by_idx(
        faiss.swig_ptr(vector),
        faiss.swig_ptr(matrix),
        faiss.swig_ptr(subset),
        dim,
        1,
        n,
        subset.shape[1],
        k,
        faiss.swig_ptr(scores),
        faiss.swig_ptr(found),
        subset.shape[1],
    )
    order = np.lexsort((found[0], -scores[0]))
    return found[0][order], scores[0][order]


def shortlist(distance: np.ndarray, length: int) -> np.ndarray:
    """Positions of the `length` smallest distances and of every row tied with the last of
    them, ascending. The cut is the length-th smallest distance, found by selection (linear,
    no sort): ~85 µs at 100k rows, where counting every distance (bincount, which copies the
    int32 distances to int64 first) took ~185 µs for the same cut."""
    if length >= distance.size:
        return np.arange(distance.size)
    cutoff = np.partition(distance, length - 1)[length - 1]
    return np.flatnonzero(distance <= cutoff)


def shortlist_length(admitted: int, k: int) -> int:
    return max(SHORTLIST_MIN, int(SHORTLIST_SHARE * admitted), k)
