"""The read side of an embedded index that its searches stand on: the meta row, reads on
the handle's read connection, the in-memory vectors and keyword postings (derived per
generation and shared by the handles of a file), and the vector and BM25 searches, each
taking the path the handle's modes give (core/store/modes.py) and saying which it took.

SQLiteIndex (index.py) builds on it with the connections, the writes and the stats.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from core.store.analyzer import analyze_query
from core.store.contract import Hit, StoreError, precisions_of
from core.store.filters import SearchFilter
from core.store.modes import KeywordPath, StoreModes, VectorPath
from core.store.sqlite.chunk_text import ChunkText
from core.store.sqlite.keyword import (
    KEYWORDS,
    KEYWORDS_SUFFIX,
    KeywordSnapshot,
    Postings,
    Refresher,
)
from core.store.sqlite.schema import connect_reader, q, read_failure
from core.store.sqlite.sign_codes import sign_codes
from core.store.sqlite.vectors import (
    LOAD_BATCH,
    SNAPSHOTS,
    S,
    SnapshotCache,
    SnapshotKey,
    VectorSnapshot,
    normalise_rows,
)

# FTS5 queries get slow and meaningless with hundreds of OR-ed terms.
MAX_QUERY_TERMS = 64


Reader = Callable[[sqlite3.Connection, SnapshotKey, int], S]


class IndexSearch:
    """The searches of one SQLite index; SQLiteIndex sets these attributes when it opens."""

    path: Path
    name: str
    modes: StoreModes
    _refresher: Refresher
    _key_path: str
    _text: ChunkText
    _paths: dict[str, str]
    _read_lock: threading.RLock
    _reader: sqlite3.Connection

    def _meta(self) -> tuple[str | None, int | None, str, str, int, int]:
        with self._read_lock:
            meta: tuple[str | None, int | None, str, str, int, int] = self._read_one(q("meta_get"))
            return meta

    @property
    def model_id(self) -> str | None:
        return self._meta()[0]

    @property
    def dim(self) -> int | None:
        return self._meta()[1]

    @property
    def embedding_precision(self) -> str | None:
        """The precision(s) of the index's vectors ("fp32", "fp32+int8"); None until bound."""
        with self._read_lock:
            if self._read_one(q("meta_get"))[0] is None:
                return None
            return "+".join(precisions_of(self._read_one(q("meta_precision"))[0]))

    def _read_one(self, sql: str, params: Any = ()) -> Any:
        try:
            return self._reader.execute(sql, params).fetchone()
        except sqlite3.Error as exc:
            raise read_failure(self.path, exc) from exc

    def _read_all(self, sql: str, params: Any = ()) -> tuple[list[str], list[tuple[Any, ...]]]:
        with self._read_lock:
            try:
                cur = self._reader.execute(sql, params)
                rows = cur.fetchall()
            except sqlite3.Error as exc:
                raise read_failure(self.path, exc) from exc
        return [d[0] for d in cur.description], rows

    def snapshot(self) -> VectorSnapshot:
        """The in-memory vectors and filter columns of the last commit (reloaded if stale),
        with sign codes when this handle's modes search its size by a shortlist."""
        snap = self._derived(SNAPSHOTS, self._read_vectors, "vectors of ", vectors=True)
        wanted = self.modes.vector_path(len(snap)) is VectorPath.SIGN_CODES
        if wanted and snap.codes is None:
            # Cached by a handle whose modes wanted none; the codes are a pure function of
            # the matrix, so two threads adding them at once add the same.
            snap.codes = sign_codes(snap.matrix)
        elif not wanted and snap.codes is not None:
            snap = replace(snap, codes=None)
        return snap

    def keywords(self) -> KeywordSnapshot:
        """The in-memory postings and filter columns of the last commit: loaded from the
        saved postings of this generation, else built from the bodies and saved."""
        return self._derived(KEYWORDS, self._read_keywords, "keyword postings of ")

    def warm(self) -> None:
        """Load now what this handle searches in memory: the vectors, and with the postings
        keyword path the postings (kept current after a write by a background rebuild;
        core/store/sqlite/keyword.py), so that the first query pays nothing."""
        if self.modes.keyword is KeywordPath.POSTINGS:
            self.keywords()
        if self.dim is not None:
            self.snapshot()

    def search_paths(self) -> dict[str, str]:
        """The paths the last searches of this handle took: `keyword_path` (fts5, or
        postings; fts5 while the postings of a new generation are being built) and
        `vector_path` (exact, or sign-codes), each once that search has run."""
        return dict(self._paths)

    @property
    def keywords_path(self) -> Path:
        return Path(f"{self.path}{KEYWORDS_SUFFIX}")

    def _read_vectors(self, conn: sqlite3.Connection, key: SnapshotKey, dim: int) -> VectorSnapshot:
        size = conn.execute(q("vector_count")).fetchone()[0]
        cursor = conn.execute(q("vector_rows"))
        batches = iter(lambda: cursor.fetchmany(LOAD_BATCH), [])
        return VectorSnapshot.from_batches(key, batches, dim, size, self.modes.shortlist_from)

    def _read_keywords(
        self, conn: sqlite3.Connection, key: SnapshotKey, _dim: int
    ) -> KeywordSnapshot:
        saved = Postings.load(self.keywords_path, key)
        if saved is not None:
            rows = conn.execute(q("keyword_columns")).fetchall()
            return KeywordSnapshot.from_rows(key, rows, saved)
        # The text is the last column of keyword_rows.
        rows = [
            (*row[:-1], self._text.decode(conn, row[-1]))
            for row in conn.execute(q("keyword_rows")).fetchall()
        ]
        snap = KeywordSnapshot.from_rows(key, rows)
        # A read-only directory: every process builds its own.
        with contextlib.suppress(OSError):
            snap.postings.save(self.keywords_path, key)
        return snap

    def _rebuild_keywords_apart(self) -> None:
        """Build the postings of the last commit on a connection of their own, so that the
        searches on this handle go on meanwhile."""
        conn = connect_reader(self.path)
        try:
            KEYWORDS.put(self._snapshot_of(conn, self._read_keywords, "keyword postings of "))
        finally:
            conn.close()

    def _derived(
        self, cache: SnapshotCache[S], read: Reader[S], what: str, *, vectors: bool = False
    ) -> S:
        """The snapshot `read` makes of the last commit, cached per generation (`vectors`:
        and per vector generation)."""
        with self._read_lock:
            cached = cache.get(self._generation_key(vectors=vectors))
            if cached is not None:
                return cached
            snap = self._snapshot_of(self._reader, read, what, vectors=vectors)
            cache.put(snap)
            return snap

    def _generation_key(self, *, vectors: bool = False) -> SnapshotKey:
        instance_id, generation, vector_generation = self._read_one(q("meta_generation"))
        return self._key(instance_id, generation, vector_generation if vectors else None)

    def _key(self, instance_id: str, generation: int, vector_generation: int | None) -> SnapshotKey:
        # A vector-only commit (migration 0013) must renew the vector matrix but not the
        # keyword postings, whose saved file is tagged with (instance id, generation): so the
        # vector generation rides in the vector snapshots' instance part only.
        if vector_generation is not None:
            instance_id = f"{instance_id}/v{vector_generation}"
        return (self._key_path, instance_id, generation)

    def _snapshot_of(
        self, conn: sqlite3.Connection, read: Reader[S], what: str, *, vectors: bool = False
    ) -> S:
        try:
            # One read transaction so the rows belong to exactly this generation.
            conn.execute(q("tx_begin_read"))
            try:
                _, dim, _, instance_id, generation, vector_generation = conn.execute(
                    q("meta_get")
                ).fetchone()
                key = self._key(instance_id, generation, vector_generation if vectors else None)
                return read(conn, key, int(dim or 0))
            finally:
                conn.execute(q("tx_commit"))
        except sqlite3.Error as exc:
            raise read_failure(self.path, exc, what) from exc

    def vector_search(self, query: np.ndarray, filt: SearchFilter, k: int) -> list[Hit]:
        """Cosine top-k among the chunks `filt` admits: exact scores, over every admitted
        chunk or a sign-code shortlist (the modes' vector path)."""
        dim = self.dim
        vec = np.asarray(query, dtype=np.float32).reshape(-1)
        if dim is None:
            return []
        if vec.size != dim:
            raise StoreError(f"index {self.name!r} has {dim}-d vectors, query has {vec.size}")
        hits, path = self.snapshot().search_path(normalise_rows(vec), filt, k)
        self._paths["vector_path"] = path.value
        return hits

    def bm25_search(self, text: str, filt: SearchFilter, k: int) -> list[Hit]:
        """BM25 over analysed terms (OR-ed), filtered like `filt.admits`: FTS5's bm25()
        scores, from FTS5 itself or, with the postings keyword path, from the in-memory
        postings (FTS5 while those of the last commit are being built)."""
        terms = analyze_query(text)[:MAX_QUERY_TERMS]
        if not terms or k <= 0:
            return []
        snap = None
        if self.modes.keyword is KeywordPath.POSTINGS:
            with self._read_lock:
                snap = KEYWORDS.get(self._generation_key())
            if snap is None:
                self._refresher.start(self._key_path, self._rebuild_keywords_apart)
        if snap is None:
            self._paths["keyword_path"] = KeywordPath.FTS5.value
            return self.fts_bm25_search(text, filt, k)
        self._paths["keyword_path"] = KeywordPath.POSTINGS.value
        return snap.search(terms, filt, k)

    def fts_bm25_search(self, text: str, filt: SearchFilter, k: int) -> list[Hit]:
        """The same search through FTS5 itself (`score = -bm25()`): the reference the
        in-memory postings are checked against."""
        terms = analyze_query(text)[:MAX_QUERY_TERMS]
        if not terms or k <= 0:
            return []
        # Terms are word characters only, but quote them anyway: FTS5 then reads each as a
        # plain string, never as AND/OR/NEAR or a column filter.
        match = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
        _, rows = self._read_all(q("bm25_search"), {"match": match, "k": k, **filt.sql_params()})
        return [Hit(chunk_id, -rank, key, doc) for chunk_id, rank, key, doc in rows]
