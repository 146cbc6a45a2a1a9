"""BM25 over an in-memory inverted index whose cost per query is its terms' postings, not
FTS5's per-row work.

FTS5 ranks a `MATCH` by visiting every matching row through SQLite's virtual-table
machinery, then sorting: a query with a word found in most chunks costs ~1.6 s at 1M chunks
(bench/keyword_search.py). Here the postings of an index (term → chunk rows and term counts,
from the chunks' text analysed as for FTS5) live in flat numpy arrays, so a query's score vector is
one vectorised pass over its terms' postings, and the top k one `argpartition`.

The scores are FTS5's `bm25()` (k1 = 1.2, b = 0.75, idf = ln((N − n + 0.5) / (n + 0.5)),
at least 1e-6), computed in float64 from the same counts, so they equal what `bm25_search`
in sql/sqlite/read.sql returns (tests/core/test_sqlite_keyword.py compares them). The
analysed body is the analyzer's tokens joined by spaces (core/store/analyzer.py), which is
exactly what FTS5's tokenizer splits it into, so splitting on spaces gives FTS5's terms.

Postings are derived data like the vector matrix: keyed by (file, instance id, generation)
and shared by every handle on the file; SQLite stays the source of truth. Building them takes
~12 s at 100k chunks (splitting and counting ~15M postings) and loading them ~0.5 s, while
FTS5 answers a typical query in ~14 ms (bench/README.md, *Keyword search*). So only a store
opened for a long-lived process (worker, MCP server, eval, bench: the `postings` keyword path of
core/store/modes.py) uses them: `SQLiteIndex.warm` builds them, saves them beside the index
file (`<index>.sqlite-keywords`, written atomically, tagged with the generation, so a
restart loads instead of rebuilding) and keeps them current; after a write, a background
thread (the store's `Refresher`) rebuilds them while FTS5 answers with the same scores. A
store opened for a one-shot `python -m query` asks FTS5 directly.
"""

from __future__ import annotations

import logging
import threading
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from core.store.analyzer import analyzed_text
from core.store.bm25 import K1, B, fts5_idf
from core.store.contract import Hit
from core.store.filters import SearchFilter
from core.store.sqlite.columns import FILTER_COLUMNS, FilterColumns, hits, text_keys
from core.store.sqlite.keyword_file import load_arrays, save_arrays
from core.store.sqlite.vectors import SnapshotCache, SnapshotKey, top_k

log = logging.getLogger(__name__)

KEYWORDS_SUFFIX = "-keywords"  # the saved postings: `<index>.sqlite-keywords`
# Below this many postings per chunk of the index, summing per matched chunk (a sort of the
# postings) beats one dense accumulator the size of the index.
_SPARSE_SHARE = 0.05


class _TermIds(dict[str, int]):
    """Term → id, a new id for an unseen term (so a C-level `map` assigns ids)."""

    def __missing__(self, term: str) -> int:
        self[term] = len(self)
        return len(self) - 1


@dataclass
class Postings:
    """An inverted index over the analysed bodies of an index's chunks, rows in chunk order."""

    terms: dict[str, int]
    starts: np.ndarray  # int64, len(terms) + 1: term t's postings are [starts[t], starts[t+1])
    rows: np.ndarray  # int32 chunk row of each posting, ascending within a term
    counts: np.ndarray  # uint16 occurrences of the term in that chunk
    # k1 * (1 - b + b * length / average length), per chunk row: the length part of BM25.
    length_norm: np.ndarray
    # Per term, the largest tf part of BM25 (count * (k1 + 1) / (count + length_norm)) over
    # its postings: times the term's idf, the most it adds to any chunk's score.
    peaks: np.ndarray

    @classmethod
    def build(cls, bodies: Sequence[str | None]) -> Postings:
        n = len(bodies)
        terms = _TermIds()
        ids = array("i")
        lengths = np.zeros(n, dtype=np.int64)
        for row, body in enumerate(bodies):
            tokens = (body or "").split()
            lengths[row] = len(tokens)
            ids.extend(map(terms.__getitem__, tokens))
        term_of = np.frombuffer(ids, dtype=np.int32) if len(ids) else np.zeros(0, np.int32)
        row_of = np.repeat(np.arange(n, dtype=np.int64), lengths)
        # One (term, row) pair per posting, sorted by term then row, with its count.
        width = max(n, 1)
        pairs, counts = np.unique(term_of.astype(np.int64) * width + row_of, return_counts=True)
        starts = np.zeros(len(terms) + 1, dtype=np.int64)
        np.cumsum(np.bincount(pairs // width, minlength=len(terms)), out=starts[1:])
        average = lengths.sum() / n if n else 0.0
        norm = K1 * (1 - B + B * lengths / average) if average else np.full(n, K1 * (1 - B))
        rows = (pairs % width).astype(np.int32)
        clipped = np.minimum(counts, np.iinfo(np.uint16).max).astype(np.uint16)
        length_norm = np.asarray(norm, dtype=np.float64)
        return cls(
            terms=dict(terms),
            starts=starts,
            rows=rows,
            counts=clipped,
            length_norm=length_norm,
            peaks=term_peaks(starts, rows, clipped, length_norm),
        )

    def save(self, path: Path, key: SnapshotKey) -> None:
        """Write to `path` atomically, compact (core/store/sqlite/keyword_file.py), tagged
        with the generation it describes."""
        save_arrays(
            path,
            (key[1], str(key[2])),
            {
                "terms": np.frombuffer("\n".join(self.terms).encode(), dtype=np.uint8),
                "starts": self.starts,
                "rows": self.rows,
                "counts": self.counts,
                "length_norm": self.length_norm,
                "peaks": self.peaks,
            },
        )

    @classmethod
    def load(cls, path: Path, key: SnapshotKey) -> Postings | None:
        """The postings saved for exactly this generation, or None (absent, stale, unreadable:
        each only means rebuilding)."""
        saved = load_arrays(path, (key[1], str(key[2])))
        if saved is None:
            return None
        try:
            text = saved["terms"].tobytes().decode()
            names = text.split("\n") if text else []
            return cls(
                terms=dict(zip(names, range(len(names)), strict=True)),
                starts=saved["starts"],
                rows=saved["rows"],
                counts=saved["counts"],
                length_norm=saved["length_norm"],
                peaks=saved["peaks"],
            )
        except (KeyError, UnicodeDecodeError):
            return None

    def search(
        self, terms: Sequence[str], mask: np.ndarray | None, k: int
    ) -> list[tuple[int, float]]:
        """(row, score) of the k best rows by BM25 over `terms` (OR-ed) among the rows
        `mask` admits (all when None), best first."""
        return self.search_counting(terms, mask, k)[0]

    def search_counting(
        self, terms: Sequence[str], mask: np.ndarray | None, k: int
    ) -> tuple[list[tuple[int, float]], int]:
        """`search`, and how many postings it scored in full.

        MaxScore (Turtle & Flood, 1995): terms are taken by the most they can add to a score
        (idf x peak tf part), highest first. Once the k-th best partial score among admitted
        rows exceeds what the remaining terms could add together, a row none of the taken
        terms matched cannot reach the top k, so the remaining terms (the common words, with
        the longest postings) are only looked up for the rows that still could. The scores
        stay exact; only the work shrinks."""
        n = len(self.length_norm)
        ids = [self.terms[t] for t in dict.fromkeys(terms) if t in self.terms]
        if k <= 0 or not n or not ids:
            return [], 0
        idf = {t: self._idf(t, n) for t in ids}
        peaks = self.peaks
        order = sorted(ids, key=lambda t: (-idf[t] * float(peaks[t]), t))
        sizes = [int(self.starts[t + 1] - self.starts[t]) for t in order]
        bounds = [idf[t] * float(peaks[t]) for t in order]
        scored = 0
        for taken in range(1, len(order) + 1):
            rest = sum(sizes[taken:])
            # Pruning can only pay when the terms left hold more postings than those taken.
            if taken < len(order) and rest <= sum(sizes[:taken]):
                continue
            matched, scores = self._accumulate(order[:taken], idf, n)
            scored = sum(sizes[:taken])
            if mask is not None:
                admitted = mask[matched]
                matched, scores = matched[admitted], scores[admitted]
            if taken == len(order):
                break
            if matched.size < k:
                continue
            threshold = float(np.partition(scores, matched.size - k)[matched.size - k])
            room = sum(bounds[taken:])
            if threshold <= room:
                continue
            # Only rows whose partial score plus the room could still reach the threshold.
            hopeful = scores + room >= threshold
            matched, scores = matched[hopeful], scores[hopeful].copy()
            for term in order[taken:]:
                scores += self._lookup(term, idf[term], matched)
                scored += matched.size
            break
        if not matched.size:
            return [], scored
        best = top_k(scores, k)
        return list(zip(matched[best].tolist(), scores[best].tolist(), strict=True)), scored

    def _idf(self, term: int, n: int) -> float:
        found = int(self.starts[term + 1] - self.starts[term])
        return fts5_idf(n, found)

    def _weights(self, term: int, idf: float) -> tuple[np.ndarray, np.ndarray]:
        start, end = int(self.starts[term]), int(self.starts[term + 1])
        rows = self.rows[start:end]
        counts = self.counts[start:end].astype(np.float64)
        return rows, idf * counts * (K1 + 1) / (counts + self.length_norm[rows])

    def _accumulate(
        self, terms: Sequence[int], idf: dict[int, float], n: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """Matched rows (ascending) and their BM25 summed over `terms`."""
        parts = [self._weights(t, idf[t]) for t in terms]
        rows = np.concatenate([r for r, _ in parts])
        weights = np.concatenate([w for _, w in parts])
        if rows.size < _SPARSE_SHARE * n:
            matched, inverse = np.unique(rows, return_inverse=True)
            return matched, np.bincount(inverse, weights=weights)
        dense = np.bincount(rows, weights=weights, minlength=n)
        matched = np.flatnonzero(dense)
        return matched, dense[matched]

    def _lookup(self, term: int, idf: float, rows: np.ndarray) -> np.ndarray:
        """The term's BM25 part for each of `rows` (0 where it does not occur), by binary
        search in its postings: O(len(rows) log postings), not O(postings)."""
        start, end = int(self.starts[term]), int(self.starts[term + 1])
        postings = self.rows[start:end]
        at = np.searchsorted(postings, rows)
        inside = at < postings.size
        hit = np.zeros(rows.size, dtype=bool)
        hit[inside] = postings[at[inside]] == rows[inside]
        out = np.zeros(rows.size, dtype=np.float64)
        counts = self.counts[start + at[hit]].astype(np.float64)
        out[hit] = idf * counts * (K1 + 1) / (counts + self.length_norm[rows[hit]])
        return out


def term_peaks(
    starts: np.ndarray, rows: np.ndarray, counts: np.ndarray, length_norm: np.ndarray
) -> np.ndarray:
    """Per term, the largest count * (k1 + 1) / (count + length_norm[row]) over its
    postings, computed in blocks so that the temporary arrays stay small at 1M chunks.
    Every term has at least one posting (ids are given to seen tokens only)."""
    terms = len(starts) - 1
    peaks = np.zeros(terms, dtype=np.float64)
    block = 1 << 22
    for low in range(0, len(rows), block):
        high = min(low + block, len(rows))
        c = counts[low:high].astype(np.float64)
        tf = c * (K1 + 1) / (c + length_norm[rows[low:high]])
        first = int(np.searchsorted(starts, low, side="right")) - 1
        last = int(np.searchsorted(starts, high - 1, side="right")) - 1
        offsets = np.maximum(starts[first : last + 1], low) - low
        peaks[first : last + 1] = np.maximum(
            peaks[first : last + 1], np.maximum.reduceat(tf, offsets)
        )
    return peaks


@dataclass
class KeywordSnapshot:
    key: SnapshotKey
    chunk_ids: list[str]
    columns: FilterColumns
    postings: Postings
    keys: np.ndarray | None = None  # the rows' text_keys, as VectorSnapshot.keys
    doc_ids: Sequence[str | None] = ()  # the rows' doc_ids, as VectorSnapshot.doc_ids

    @classmethod
    def from_rows(
        cls, key: SnapshotKey, rows: Sequence[tuple[Any, ...]], postings: Postings | None = None
    ) -> KeywordSnapshot:
        """Rows of keyword_rows (chunk id, the filter columns, text_key, doc_id, context, content;
        sql/sqlite/read.sql), or of keyword_columns (without the text) when the postings were
        saved. The text is analysed as it was for FTS5 (`analyzed_text`)."""
        width = FILTER_COLUMNS + (3 if postings is not None else 5)
        cols = list(zip(*rows, strict=True)) if rows else [()] * width
        if postings is None:
            contexts, contents = cols[FILTER_COLUMNS + 3], cols[FILTER_COLUMNS + 4]
            postings = Postings.build(
                [analyzed_text(c, t) for c, t in zip(contexts, contents, strict=True)]
            )
        return cls(
            key=key,
            chunk_ids=list(cols[0]),
            columns=FilterColumns.from_columns(cols[1 : FILTER_COLUMNS + 1]),
            postings=postings,
            keys=text_keys(cols[FILTER_COLUMNS + 1]),
            doc_ids=cols[FILTER_COLUMNS + 2],
        )

    def __len__(self) -> int:
        return len(self.chunk_ids)

    def search(self, terms: Sequence[str], filt: SearchFilter, k: int) -> list[Hit]:
        """The k best chunks by BM25 over `terms` (OR-ed) among those `filt` admits."""
        found = self.postings.search(terms, self.columns.mask(filt), k)
        return hits(
            self.chunk_ids, self.keys, self.doc_ids, [r for r, _ in found], [s for _, s in found]
        )


class Refresher:
    """Rebuilds the postings of an index file on a background thread, one build per file at
    a time, for the handles of a store opened with the postings keyword path (the store owns
    one and lends it to its handles). Until the new postings are ready, searches go to FTS5,
    whose scores are the same."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: dict[str, threading.Thread] = {}

    def start(self, path: str, build: Callable[[], object]) -> None:
        with self._lock:
            if path in self._running:
                return
            thread = threading.Thread(
                target=self._run, args=(path, build), name=f"postings {path}", daemon=True
            )
            self._running[path] = thread
        thread.start()

    def wait(self, path: str, timeout: float | None = None) -> None:
        with self._lock:
            thread = self._running.get(path)
        if thread is not None:
            thread.join(timeout)

    def _run(self, path: str, build: Callable[[], object]) -> None:
        try:
            build()
        except Exception as exc:  # the next search tries again; FTS5 answers meanwhile
            log.warning("rebuilding the keyword postings of %s failed: %s", path, exc)
        finally:
            with self._lock:
                self._running.pop(path, None)


KEYWORDS: SnapshotCache[KeywordSnapshot] = SnapshotCache()
