"""One bit per dimension (the sign) of every stored vector, for a shortlist that exact
scores then rank: vector search over a large index without scoring every row.

Exact search reads all n × dim floats per query (100k × 384: ~8 ms, 1M: ~75–100 ms on this
2-core box). The sign codes are 1/32 of that; their Hamming distance to the query's code
orders the rows roughly by angle, so the true top ten sit in a short head of that order:
on 27k MiniLM vectors of the four dev corpora, re-scoring the nearest 2 % by Hamming
distance finds 99.6 % of the exact top ten (README, *Measured*; bench/vectors.py). The
codes are stored one 64-bit word per column, so a distance is `dim / 64` vectorised passes
of XOR and popcount (~0.6 ms at 100k).

Filters are applied to the distances before the shortlist is cut, so a restrictive filter
shortens the list it is cut from instead of emptying the result (no post-filter starvation).
"""

from __future__ import annotations

import numpy as np

# Indexes below this many rows get no codes: exact scoring costs about as much, and is exact.
EXACT_BELOW = 20_000
# The shortlist: at least SHORTLIST_MIN rows, else this share of the admitted rows (recall
# depends on the shortlist's length more than on its share; 1,000 of 27k: 99.8 %).
SHORTLIST_MIN = 1_000
SHORTLIST_SHARE = 0.02
# A shortlist pays only when it is this many times shorter than the rows it is cut from.
SHORTLIST_SHARE_OF_WORK = 4


def sign_codes(matrix: np.ndarray) -> np.ndarray:
    """(words, n) uint64: bit j of row i is set when matrix[i, j] > 0; padded with zero bits
    to a whole number of 64-bit words."""
    n, dim = matrix.shape
    words = -(-dim // 64)
    padded = np.zeros((n, words * 64), dtype=bool)
    padded[:, :dim] = matrix > 0
    packed = np.packbits(padded, axis=1).view(np.uint64)  # (n, words), big-endian bit order
    return np.ascontiguousarray(packed.T)


def hamming(codes: np.ndarray, query: np.ndarray) -> np.ndarray:
    """uint16 Hamming distance of every row's code to the code of `query` (a dim vector)."""
    mine = sign_codes(query.reshape(1, -1))[:, 0]
    distance: np.ndarray = np.bitwise_count(codes[0] ^ mine[0]).astype(np.uint16)
    for word in range(1, codes.shape[0]):
        distance += np.bitwise_count(codes[word] ^ mine[word])
    return distance


def shortlist(distance: np.ndarray, length: int) -> np.ndarray:
    """Positions of the `length` smallest distances and of every row tied with the last of
    them (a counting cut: linear, no sort), ascending."""
    if length >= distance.size:
        return np.arange(distance.size)
    counts = np.cumsum(np.bincount(distance))
    cutoff = int(np.searchsorted(counts, length))
    return np.flatnonzero(distance <= cutoff)


def shortlist_length(admitted: int, k: int) -> int:
    return max(SHORTLIST_MIN, int(SHORTLIST_SHARE * admitted), k)
