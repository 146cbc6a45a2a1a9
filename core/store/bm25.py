"""The BM25 formula both stores score with, and the two inverse document frequencies they
use: FTS5's `bm25()` (the SQLite store, its postings reproduce it exactly) and Lucene's, which
TiDB's native full-text search and the TiDB store's own postings use. Kept in one place so
that a text scored outside a store (query/calibration scores chunk texts it has stripped)
scores as that store would score it."""

from __future__ import annotations

import math

K1 = 1.2
B = 0.75
MIN_IDF = 1e-6


def fts5_idf(chunks: int, containing: int) -> float:
    """ln((N − n + 0.5) / (n + 0.5)), at least MIN_IDF, as FTS5 computes it."""
    return max(math.log((chunks - containing + 0.5) / (containing + 0.5)), MIN_IDF)


def lucene_idf(chunks: int, containing: int) -> float:
    """ln(1 + (N − n + 0.5) / (n + 0.5)), as Lucene (and TiDB's BM25Tantivy) computes it."""
    return math.log(1.0 + (chunks - containing + 0.5) / (containing + 0.5))


def term_part(idf: float, count: float, length: float, average_length: float) -> float:
    """One term's share of a chunk's score: idf × tf(k1 + 1) / (tf + k1(1 − b + b·len/avg))."""
    norm = K1 * (1 - B + B * length / average_length) if average_length else K1 * (1 - B)
    return idf * count * (K1 + 1) / (count + norm)
