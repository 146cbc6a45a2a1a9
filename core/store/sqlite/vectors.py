"""Exact vector search over an in-memory matrix, with `SearchFilter` as numpy masks.

The matrix and the filterable columns of an index are loaded once per process and shared by
every handle on the same file; a snapshot is keyed by (file, instance_id, generation) and a
write bumps the generation, so readers reload only after a change.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.store.contract import Hit, StoreError
from core.store.filters import USER_CODEBASE, SearchFilter

_INT_MIN = np.iinfo(np.int64).min
_INT_MAX = np.iinfo(np.int64).max
_NULL_CODE = -1  # code of a NULL domain/source
_ABSENT_CODE = -2  # code of a requested value that no chunk has
# Below this share of admitted rows, copying out their vectors beats scoring the whole matrix.
_GATHER_SHARE = 0.15

SnapshotKey = tuple[str, str, int]  # (path, instance_id, generation)


def _encode(values: Sequence[str | None]) -> tuple[np.ndarray, dict[str | None, int]]:
    vocab: dict[str | None, int] = {None: _NULL_CODE}
    codes = np.fromiter(
        (vocab.setdefault(v, len(vocab) - 1) for v in values), dtype=np.int32, count=len(values)
    )
    return codes, vocab


def _matrix(blobs: Sequence[bytes], dim: int, path: str) -> np.ndarray:
    # Copying each blob into one preallocated buffer is ~4x faster than b"".join + frombuffer.
    width = dim * 4
    matrix = np.empty((len(blobs), dim), dtype="<f4")
    buffer = memoryview(matrix.reshape(-1).view(np.uint8))  # type: ignore[arg-type]
    for row, blob in enumerate(blobs):
        if len(blob) != width:
            raise StoreError(f"index {path}: a stored vector is not {dim} float32 values")
        buffer[row * width : (row + 1) * width] = blob
    return matrix


def _memberships(tag_lists: Sequence[str | None]) -> dict[str, np.ndarray]:
    """Framework tag -> positions of the rows carrying it, from JSON arrays."""
    members: dict[str, list[int]] = {}
    parsed: dict[str, frozenset[str]] = {}  # few distinct tag lists: parse each once
    for row, text in enumerate(tag_lists):
        if not text or text == "[]":
            continue
        tags = parsed.get(text)
        if tags is None:
            tags = parsed[text] = frozenset(json.loads(text))
        for tag in tags:
            members.setdefault(tag, []).append(row)
    return {tag: np.asarray(rows, dtype=np.int64) for tag, rows in members.items()}


def _ints(values: Sequence[int | None], null: int) -> np.ndarray:
    return np.fromiter(
        (null if v is None else v for v in values), dtype=np.int64, count=len(values)
    )


@dataclass
class VectorSnapshot:
    key: SnapshotKey
    chunk_ids: list[str]
    matrix: np.ndarray  # (n, dim) float32, rows L2-normalised
    domain_codes: np.ndarray
    domain_vocab: dict[str | None, int]
    source_codes: np.ndarray
    source_vocab: dict[str | None, int]
    # NULL sentinels make the version rule a plain comparison: an absent min is below every
    # target, an absent max above, and an absent deprecated_in counts as "deprecated always".
    min_int: np.ndarray
    max_int: np.ndarray
    deprecated: np.ndarray
    deprecated_in_int: np.ndarray
    verified: np.ndarray  # first 10 characters of last_verified ("" when NULL)
    verified_null: np.ndarray
    framework_rows: dict[str, np.ndarray]  # tag -> row positions (sparse membership)

    @classmethod
    def from_rows(cls, key: SnapshotKey, rows: list[tuple[Any, ...]], dim: int) -> VectorSnapshot:
        """Rows of vector_rows (sql/sqlite/read.sql)."""
        n = len(rows)
        cols = list(zip(*rows, strict=True)) if rows else [()] * 10
        domain_codes, domain_vocab = _encode(cols[1])
        source_codes, source_vocab = _encode(cols[2])
        verified = cols[8]
        return cls(
            key=key,
            chunk_ids=list(cols[0]),
            matrix=_matrix(cols[9], dim, key[0]),
            domain_codes=domain_codes,
            domain_vocab=domain_vocab,
            source_codes=source_codes,
            source_vocab=source_vocab,
            min_int=_ints(cols[3], _INT_MIN),
            max_int=_ints(cols[4], _INT_MAX),
            deprecated=np.fromiter((bool(v) for v in cols[5]), dtype=bool, count=n),
            deprecated_in_int=_ints(cols[6], _INT_MIN),
            verified=np.array(["" if v is None else str(v)[:10] for v in verified], dtype="U10"),
            verified_null=np.fromiter((v is None for v in verified), dtype=bool, count=n),
            framework_rows=_memberships(cols[7]),
        )

    def __len__(self) -> int:
        return len(self.chunk_ids)

    def mask(self, filt: SearchFilter) -> np.ndarray | None:
        """Rows that `filt.admits`, or None when the filter restricts nothing."""
        masks: list[np.ndarray] = []
        user = self.source_codes == self.source_vocab.get(USER_CODEBASE, _ABSENT_CODE)
        if filt.sources is not None:
            masks.append(_member(self.source_codes, self.source_vocab, filt.sources))
        if filt.domains is not None:
            ok = _member(self.domain_codes, self.domain_vocab, filt.domains)
            masks.append(ok | user if filt.include_user_codebase else ok)
        if not filt.include_user_codebase:
            masks.append(~user)
        target = filt.ios_version_int
        if target is not None:
            ok = (self.min_int <= target) & (self.max_int >= target)
            if not filt.include_deprecated:
                ok &= ~self.deprecated | (self.deprecated_in_int > target)
            masks.append(ok)
        if filt.frameworks_any is not None:
            ok = np.zeros(len(self), dtype=bool)
            for tag in set(filt.frameworks_any):
                rows = self.framework_rows.get(tag)
                if rows is not None:
                    ok[rows] = True
            masks.append(ok)
        cutoff = filt.freshness_cutoff()
        if cutoff is not None:
            masks.append(self.verified_null | (self.verified >= cutoff))
        if not masks:
            return None
        combined = masks[0].copy()
        for m in masks[1:]:
            combined &= m
        return combined

    def search(self, query: np.ndarray, filt: SearchFilter, k: int) -> list[Hit]:
        if k <= 0 or not len(self):
            return []
        mask = self.mask(filt)
        if mask is None:
            positions = None
            scores = _dot(self.matrix, query)
        else:
            positions = np.flatnonzero(mask)
            if not positions.size:
                return []
            if positions.size < _GATHER_SHARE * len(self):
                scores = _dot(self.matrix[positions], query)
            else:
                scores = _dot(self.matrix, query)[positions]
        top = _top_k(scores, k)
        rows = top if positions is None else positions[top]
        ids = self.chunk_ids
        return [
            Hit(ids[r], float(s)) for r, s in zip(rows.tolist(), scores[top].tolist(), strict=True)
        ]


def _member(
    codes: np.ndarray, vocab: dict[str | None, int], wanted: Iterable[str | None]
) -> np.ndarray:
    """codes isin wanted, via a lookup table (np.isin sorts, ~10x slower here)."""
    table = np.zeros(len(vocab) + 1, dtype=bool)  # codes run from -1 (NULL) to len-2
    for value in wanted:
        code = vocab.get(value)
        if code is not None:
            table[code + 1] = True
    result: np.ndarray = table[codes + 1]
    return result


def _dot(matrix: np.ndarray, query: np.ndarray) -> np.ndarray:
    """matrix @ query without BLAS: OpenBLAS threads its matrix-vector product, and on a
    small shared machine the thread hand-off costs more than it saves (measured 8 ms vs
    5 ms at 100k x 384); einsum's single-threaded SIMD loop is memory-bound and steady,
    and leaves the other cores to concurrent queries."""
    product: np.ndarray = np.einsum("ij,j->i", matrix, query)
    return product


def _top_k(scores: np.ndarray, k: int) -> np.ndarray:
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


class SnapshotCache:
    """One snapshot per index file per process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_path: dict[str, VectorSnapshot] = {}

    def get(self, key: SnapshotKey) -> VectorSnapshot | None:
        with self._lock:
            snap = self._by_path.get(key[0])
        return snap if snap is not None and snap.key == key else None

    def put(self, snapshot: VectorSnapshot) -> None:
        with self._lock:
            self._by_path[snapshot.key[0]] = snapshot

    def evict(self, path: str) -> None:
        with self._lock:
            self._by_path.pop(path, None)


SNAPSHOTS = SnapshotCache()
