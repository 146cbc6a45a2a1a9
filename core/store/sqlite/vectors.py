"""Vector search over an in-memory matrix, with `SearchFilter` as numpy masks: exact, or
over a sign-code shortlist for a large index (the store's modes say which; core/store/modes.py).

The matrix and the filterable columns of an index are loaded once per process and shared by
every handle on the same file; a snapshot is keyed by (file, instance_id, generation) and a
write bumps the generation, so readers reload only after a change.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

import numpy as np

from core.store.contract import Hit, StoreError
from core.store.filters import SearchFilter
from core.store.modes import VectorPath
from core.store.sqlite.columns import FILTER_COLUMNS, FilterColumns, hits, text_keys
from core.store.sqlite.sign_codes import (
    SHORTLIST_SHARE_OF_WORK,
    hamming,
    rescore,
    shortlist,
    shortlist_length,
    sign_codes,
)

# Below this share of admitted rows, copying out their vectors beats scoring the whole matrix.
_GATHER_SHARE = 0.15

SnapshotKey = tuple[str, str, int]  # (path, instance_id, generation)


# Rows read from SQLite per batch when loading: the rows of one batch (with their vector
# blobs) are alive at once, not the whole index's (1M chunks: ~1.5 GB of blobs).
LOAD_BATCH = 10_000


# Stored vectors: L2-normalised, little-endian float16 since 2026-11 (half the bytes of
# float32, which older files hold and which are still read); searched as float32.
VECTOR_DTYPE = np.dtype("<f2")
_WIDTHS: dict[int, np.dtype[Any]] = {2: np.dtype("<f2"), 4: np.dtype("<f4")}


def _fill(matrix: np.ndarray, start: int, blobs: Sequence[bytes], path: str) -> None:
    dim = matrix.shape[1]
    if not blobs:
        return
    widths = {len(blob) for blob in blobs}
    if len(widths) == 1 and (width := widths.pop()) // dim in _WIDTHS and width % dim == 0:
        # One join and one conversion per batch: per-row numpy calls cost ~1 s per 1M rows.
        rows = np.frombuffer(b"".join(blobs), dtype=_WIDTHS[width // dim]).reshape(-1, dim)
        matrix[start : start + len(blobs)] = rows
        _renormalise(matrix[start : start + len(blobs)])
        return
    for row, blob in enumerate(blobs, start=start):  # a file written by both versions
        if len(blob) % dim or len(blob) // dim not in _WIDTHS:
            raise StoreError(
                f"index {path}: a stored vector is neither {dim} float16 nor float32 values"
            )
        matrix[row] = np.frombuffer(blob, dtype=_WIDTHS[len(blob) // dim])
        _renormalise(matrix[row : row + 1])


def decode_vectors(blobs: Sequence[bytes], dim: int, path: str = "") -> np.ndarray:
    """Stored vector blobs (float16 or float32) as one float32 matrix of unit rows."""
    matrix = np.empty((len(blobs), dim), dtype="<f4")
    _fill(matrix, 0, blobs, path)
    return matrix


def _renormalise(rows: np.ndarray) -> None:
    """Back to unit length in place: rounding to float16 moves a row's length by ~1e-4 (a
    first-order error in every cosine), its direction by ~1e-8 (second order)."""
    norms = np.sqrt(np.einsum("ij,ij->i", rows, rows))
    np.divide(rows, norms[:, None], out=rows, where=norms[:, None] > 0)


@dataclass
class VectorSnapshot:
    key: SnapshotKey
    chunk_ids: list[str]
    matrix: np.ndarray  # (n, dim) float32, rows L2-normalised
    columns: FilterColumns
    # Sign codes of the rows (core/store/sqlite/sign_codes.py), for indexes large enough
    # that a shortlist beats scoring every row.
    codes: np.ndarray | None = None
    # The rows' text_keys, which the hits carry (columns.text_keys; None: not all known).
    keys: np.ndarray | None = None
    # The rows' doc_ids, which the hits carry too (query.retrieval.fusion.document_standing).
    doc_ids: list[str | None] = field(default_factory=list)

    @classmethod
    def from_rows(
        cls, key: SnapshotKey, rows: list[tuple[Any, ...]], dim: int, codes_from: int | None
    ) -> VectorSnapshot:
        """Rows of vector_rows (sql/sqlite/read.sql): chunk id, the filter columns, text_key,
        doc_id, vector; with sign codes when there are at least `codes_from` rows (None: never)."""
        return cls.from_batches(key, [rows] if rows else [], dim, len(rows), codes_from)

    @classmethod
    def from_batches(
        cls,
        key: SnapshotKey,
        batches: Iterable[Sequence[tuple[Any, ...]]],
        dim: int,
        size: int,
        codes_from: int | None,
    ) -> VectorSnapshot:
        """The same from batches of rows, `size` rows expected (more are accepted)."""
        matrix = np.empty((size, dim), dtype="<f4")
        cols: list[list[Any]] = [[] for _ in range(FILTER_COLUMNS + 3)]
        count = 0
        for batch in batches:
            if count + len(batch) > len(matrix):  # rows written since the count: grow
                grown = np.empty((count + len(batch), dim), dtype="<f4")
                grown[:count] = matrix[:count]
                matrix = grown
            parts = list(zip(*batch, strict=True))
            _fill(matrix, count, parts[-1], key[0])
            for column, values in zip(cols, parts[:-1], strict=True):
                column.extend(values)
            count += len(batch)
        matrix = matrix[:count]
        return cls(
            key=key,
            chunk_ids=cols[0],
            matrix=matrix,
            columns=FilterColumns.from_columns(cols[1 : FILTER_COLUMNS + 1]),
            codes=sign_codes(matrix) if codes_from is not None and count >= codes_from else None,
            keys=text_keys(cols[FILTER_COLUMNS + 1]),
            doc_ids=cols[FILTER_COLUMNS + 2],
        )

    def __len__(self) -> int:
        return len(self.chunk_ids)

    def mask(self, filt: SearchFilter) -> np.ndarray | None:
        """Rows that `filt.admits`, or None when the filter restricts nothing."""
        return self.columns.mask(filt)

    def search(self, query: np.ndarray, filt: SearchFilter, k: int) -> list[Hit]:
        """The k rows `filt` admits with the highest cosine (`search_path`'s hits)."""
        return self.search_path(query, filt, k)[0]

    def search_path(
        self, query: np.ndarray, filt: SearchFilter, k: int
    ) -> tuple[list[Hit], VectorPath]:
        """The k rows `filt` admits with the highest cosine, and how they were found: exact
        scores over a sign-code shortlist when the snapshot has codes and the shortlist is a
        small part of the admitted rows, else over every admitted row."""
        if k <= 0 or not len(self):
            return [], VectorPath.EXACT
        mask = self.mask(filt)
        positions = None if mask is None else np.flatnonzero(mask)
        admitted = len(self) if positions is None else positions.size
        if not admitted:
            return [], VectorPath.EXACT
        if self.codes is not None and admitted > SHORTLIST_SHARE_OF_WORK * shortlist_length(
            admitted, k
        ):
            distance = hamming(self.codes, query)
            if positions is not None:
                distance = distance[positions]
            near = shortlist(distance, shortlist_length(admitted, k))
            rows, best = rescore(
                self.matrix, query, near if positions is None else positions[near], k
            )
            return self._hits(rows, best), VectorPath.SIGN_CODES
        if positions is None:
            scores = _dot(self.matrix, query)
        elif positions.size < _GATHER_SHARE * len(self):
            scores = _dot(self.matrix[positions], query)
        else:
            scores = _dot(self.matrix, query)[positions]
        top = top_k(scores, k)
        hits = self._hits(top if positions is None else positions[top], scores[top])
        return hits, VectorPath.EXACT

    def _hits(self, rows: np.ndarray, scores: np.ndarray) -> list[Hit]:
        return hits(self.chunk_ids, self.keys, self.doc_ids, rows.tolist(), scores.tolist())


def _dot(matrix: np.ndarray, query: np.ndarray) -> np.ndarray:
    """matrix @ query without BLAS: OpenBLAS threads its matrix-vector product, and on a
    small shared machine the thread hand-off costs more than it saves (measured 8 ms vs
    5 ms at 100k x 384); einsum's single-threaded SIMD loop is memory-bound and steady,
    and leaves the other cores to concurrent queries."""
    product: np.ndarray = np.einsum("ij,j->i", matrix, query)
    return product


def top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k best scores, best first; ties by position so results are stable."""
    candidates = np.argpartition(-scores, k - 1)[:k] if k < scores.size else np.arange(scores.size)
    order = np.lexsort((candidates, -scores[candidates]))
    return candidates[order]


def normalise_rows(vectors: np.ndarray) -> np.ndarray:
    """float32 copy with every non-zero row scaled to unit length."""
    out = np.array(vectors, dtype=np.float32, copy=True, order="C")
    norms = np.linalg.norm(out, axis=-1, keepdims=True)
    np.divide(out, norms, out=out, where=norms > 0)
    return out


class _Keyed(Protocol):
    key: SnapshotKey


S = TypeVar("S", bound=_Keyed)


class SnapshotCache(Generic[S]):
    """One snapshot per index file per process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_path: dict[str, S] = {}

    def get(self, key: SnapshotKey) -> S | None:
        with self._lock:
            snap = self._by_path.get(key[0])
        return snap if snap is not None and snap.key == key else None

    def put(self, snapshot: S) -> None:
        with self._lock:
            self._by_path[snapshot.key[0]] = snapshot

    def evict(self, path: str) -> None:
        with self._lock:
            self._by_path.pop(path, None)


SNAPSHOTS: SnapshotCache[VectorSnapshot] = SnapshotCache()


def vector_blobs(vectors: np.ndarray, count: int, dim: int | None, index: str) -> list[bytes]:
    """The stored form of a batch's `count` vectors: unit length, VECTOR_DTYPE bytes.
    `index` names the index in errors."""
    if count == 0:
        return []
    if dim is None:
        raise StoreError(f"{index}: bind_model before loading vectors")
    arr = np.asarray(vectors)
    if arr.shape != (count, dim):
        raise StoreError(f"{index}: expected vectors of shape ({count}, {dim}), got {arr.shape}")
    # Half precision at rest (VECTOR_DTYPE): half the file's vector bytes, and cosines
    # move by ~1e-4, far below what separates neighbouring results.
    unit = normalise_rows(arr).astype(VECTOR_DTYPE)
    return [row.tobytes() for row in unit]
