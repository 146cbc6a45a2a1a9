"""How the index's own searches would score a chunk text it does not hold: the stripped
source of a mined pair (query/calibration/pairs.py).

Vector: the cosine between the query's vector and the text's, embedded as ingestion embeds a
chunk. BM25: the store's formula (core/store/bm25.py, with the store's own idf) over the
text's analysed tokens, with document frequencies and the average length estimated from a
sample of the index's chunks: exact counts would need a pass over every posting, and the
ranks this decides among the store's real hits move little with the estimate.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable

import numpy as np

from core.store.analyzer import analyze_query, analyzed_text
from core.store.bm25 import term_part


class SampleStatistics:
    """Term statistics of an index estimated from a sample of its chunks' indexed bodies."""

    def __init__(
        self, bodies: Iterable[str], chunks: int, idf: Callable[[int, int], float]
    ) -> None:
        self.containing: Counter[str] = Counter()
        lengths = []
        for body in bodies:
            tokens = analyzed_text(body).split()
            lengths.append(len(tokens))
            self.containing.update(set(tokens))
        self.sampled = len(lengths)
        self.chunks = max(chunks, self.sampled)
        self.average_length = sum(lengths) / len(lengths) if lengths else 0.0
        self._idf = idf

    def estimated_containing(self, term: str) -> int:
        """Chunks of the whole index holding `term`: at least the scored text itself."""
        share = self.containing[term] / self.sampled if self.sampled else 0.0
        return max(1, round(share * self.chunks))

    def bm25(self, query: str, text: str) -> float:
        counts = Counter(analyzed_text(text).split())
        length = sum(counts.values())
        return sum(
            term_part(
                self._idf(self.chunks, self.estimated_containing(term)),
                counts[term],
                length,
                self.average_length,
            )
            for term in analyze_query(query)
            if counts[term]
        )


def cosines(queries: np.ndarray, texts: np.ndarray) -> np.ndarray:
    """Row-wise cosine of two equally long lists of vectors."""
    q = queries / np.maximum(np.linalg.norm(queries, axis=1, keepdims=True), 1e-12)
    t = texts / np.maximum(np.linalg.norm(texts, axis=1, keepdims=True), 1e-12)
    return np.einsum("ij,ij->i", q, t)
