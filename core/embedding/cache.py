"""Content-keyed embedding cache: a text embedded once by a model is never embedded again.

It lives next to the indexes (`Settings.embedding_cache_file`, by default
data/indexes/cache/embeddings.sqlite), not inside one, so rebuilding any index with the
same model re-embeds only new or changed chunks.
Key: sha256(identity + "\\x00" + text), the identity being the model id, plus
"@precision:variant" for any precision but fp32 (`vector_identity`). The text is the raw
document text; the model's document prefix is implied by the model id, so it is not part
of the key.
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

import numpy as np

from core.embedding.precision import precision_label

if TYPE_CHECKING:
    from core.embedding.base import Embedder

SCHEMA_VERSION = 1
_SCHEMA = """
CREATE TABLE IF NOT EXISTS embeddings (
    key TEXT PRIMARY KEY,      -- sha256(model_id NUL text), hex
    model_id TEXT NOT NULL,    -- kept for inspection and per-model purges
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL       -- little-endian float32 * dim
)
"""
_LOG = logging.getLogger("rag.embedding")
# SQLite's default limit on host parameters is 999 on old builds; stay below it.
_QUERY_CHUNK = 500


class EmbeddingCacheError(RuntimeError):
    """The cache file cannot be used; the message names it."""


def vector_identity(model_id: str, precision: str) -> str:
    """What cached vectors are keyed by: the model, and its precision unless fp32 (so the fp32
    entries cached before precisions existed stay valid), with the variant that makes it
    (`precision_label`: a changed int8 quantization computes other vectors). A precision that
    held the quality guard still gets its own key: a hit must return exactly what that
    precision computes, and a guard can be withdrawn."""
    return model_id if precision == "fp32" else f"{model_id}@{precision_label(precision)}"


def cache_key(model_id: str, text: str) -> str:
    return hashlib.sha256(f"{model_id}\x00{text}".encode()).hexdigest()


class EmbeddingCache:
    """SQLite (WAL) store of float32 vectors. Safe to share between threads of a process;
    several processes may use one file (WAL readers do not block the single writer)."""

    def __init__(self, path: str | Path, *, busy_timeout_s: float = 30.0) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # IMMEDIATE: a write takes the write lock when it begins, so a busy writer in
            # another process is waited for (a deferred transaction that has to upgrade
            # fails at once instead).
            self._conn = sqlite3.connect(
                self.path,
                timeout=busy_timeout_s,
                check_same_thread=False,
                isolation_level="IMMEDIATE",
            )
        except (sqlite3.Error, OSError) as exc:
            raise self._error(exc) from exc
        try:
            self._setup()
        except sqlite3.Error as exc:
            self._conn.close()
            raise self._error(exc) from exc
        except EmbeddingCacheError:
            self._conn.close()
            raise

    def _setup(self) -> None:
        version = self._conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise EmbeddingCacheError(
                f"embedding cache {self.path} has schema {version}, newer than this code "
                f"({SCHEMA_VERSION})"
            )
        # Several ingests open the cache at once: switch the journal and create the table
        # only when that is still to do, so an open is not a write that waits for theirs.
        if self._conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            self._conn.execute("PRAGMA journal_mode=WAL")
        # A lost cache write costs one re-embedding, not data: skip the fsync per commit.
        self._conn.execute("PRAGMA synchronous=NORMAL")
        if version < SCHEMA_VERSION:
            with self._conn:
                self._conn.execute(_SCHEMA)
                self._conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")

    def _error(self, exc: Exception) -> EmbeddingCacheError:
        return EmbeddingCacheError(
            f"cannot use embedding cache {self.path}: {exc}. It is only a cache: "
            "delete the file to start a fresh one."
        )

    def get_many(
        self, model_id: str, texts: Sequence[str]
    ) -> tuple[dict[int, np.ndarray], list[int]]:
        """Cached vectors by input position, and the positions that are not cached."""
        keys = [cache_key(model_id, t) for t in texts]
        found_by_key = self._fetch(sorted(set(keys)))
        found = {i: found_by_key[k] for i, k in enumerate(keys) if k in found_by_key}
        missing = [i for i, k in enumerate(keys) if k not in found_by_key]
        return found, missing

    def _fetch(self, keys: list[str]) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        try:
            with self._lock:
                for start in range(0, len(keys), _QUERY_CHUNK):
                    chunk = keys[start : start + _QUERY_CHUNK]
                    marks = ",".join("?" * len(chunk))
                    rows = self._conn.execute(
                        f"SELECT key, dim, vector FROM embeddings WHERE key IN ({marks})", chunk
                    ).fetchall()
                    for key, dim, blob in rows:
                        out[key] = self._decode(key, dim, blob)
        except sqlite3.Error as exc:
            raise self._error(exc) from exc
        return out

    def _decode(self, key: str, dim: int, blob: bytes) -> np.ndarray:
        if not isinstance(blob, bytes) or len(blob) != 4 * dim:
            raise EmbeddingCacheError(
                f"embedding cache {self.path} is damaged: entry {key[:12]}... holds "
                f"{len(blob) if isinstance(blob, bytes) else type(blob).__name__} bytes for "
                f"dim {dim}. Delete the file to start a fresh one."
            )
        return np.frombuffer(blob, dtype="<f4")

    def put_many(self, model_id: str, texts: Sequence[str], vectors: np.ndarray) -> None:
        """Store one vector per text, all in one transaction."""
        vectors = np.ascontiguousarray(vectors, dtype="<f4")
        if vectors.ndim != 2 or vectors.shape[0] != len(texts):
            raise ValueError(f"{len(texts)} texts but vectors of shape {vectors.shape}")
        dim = vectors.shape[1]
        rows = [
            (cache_key(model_id, t), model_id, dim, vectors[i].tobytes())
            for i, t in enumerate(texts)
        ]
        try:
            with self._lock, self._conn:
                self._conn.executemany(
                    "INSERT OR REPLACE INTO embeddings (key, model_id, dim, vector) "
                    "VALUES (?, ?, ?, ?)",
                    rows,
                )
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc):
                raise self._error(exc) from exc
            # Another run held the cache past the busy timeout: these vectors are still
            # returned to the caller; only a later run may have to compute them again.
            _LOG.warning("embedding cache %s busy; %d vectors not cached", self.path, len(rows))
        except sqlite3.Error as exc:
            raise self._error(exc) from exc

    def count(self, model_id: str | None = None) -> int:
        sql, args = "SELECT COUNT(*) FROM embeddings", tuple[str, ...]()
        if model_id is not None:
            sql, args = sql + " WHERE model_id = ?", (model_id,)
        try:
            with self._lock:
                return int(self._conn.execute(sql, args).fetchone()[0])
        except sqlite3.Error as exc:
            raise self._error(exc) from exc

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> EmbeddingCache:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def embed_with_cache(
    embedder: Embedder,
    cache: EmbeddingCache | None,
    texts: list[str],
    *,
    after_batch: Callable[[], None] | None = None,
) -> tuple[np.ndarray, int, int]:
    """Document vectors for `texts`: (vectors, cache_hits, embedded).

    Only cache misses reach the embedder, each distinct text once; `cache_hits` counts
    input positions served from the cache, `embedded` the texts sent to the embedder.
    Cached vectors of another dimension (the model id was reused for a different
    setup) count as misses and are overwritten.
    """
    out = np.zeros((len(texts), embedder.dim), dtype=np.float32)
    found: dict[int, np.ndarray] = {}
    identity = vector_identity(embedder.model_id, getattr(embedder, "precision", "fp32"))
    if cache is not None:
        found, _ = cache.get_many(identity, texts)
        found = {i: v for i, v in found.items() if v.shape[0] == embedder.dim}
    for i, vector in found.items():
        out[i] = vector
    positions: dict[str, list[int]] = {}
    for i, text in enumerate(texts):
        if i not in found:
            positions.setdefault(text, []).append(i)
    if positions:
        unique = list(positions)

        def keep(batch: list[int], vectors: np.ndarray) -> None:
            # Each model batch reaches the cache as soon as it is computed: a run killed
            # half-way through embedding never computes those vectors again.
            if cache is not None:
                cache.put_many(identity, [unique[i] for i in batch], vectors)
            if after_batch is not None:
                after_batch()

        vectors = embedder.embed_documents(unique, on_batch=keep)
        for text, vector in zip(unique, vectors, strict=True):
            out[positions[text]] = vector
    return out, len(found), len(positions)
