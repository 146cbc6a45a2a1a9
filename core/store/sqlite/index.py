"""The embedded index: one SQLite file per named index, no server.

Writes go through one connection in `BEGIN IMMEDIATE` transactions, one per `LoadBatch`;
reads use a second connection. WAL mode gives every read statement a snapshot of the last
commit, so a search sees each document entirely before or entirely after a batch.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from core.store.analyzer import ANALYZER_VERSION, analyze_query
from core.store.contract import (
    Declaration,
    DocState,
    Hit,
    LoadBatch,
    LoadResult,
    ModelMismatch,
    StoreError,
    decode_chunk_row,
)
from core.store.filters import SearchFilter
from core.store.modes import ONE_SHOT, AnalysisSite, KeywordPath, StoreModes, VectorPath
from core.store.sqlite.analysis_process import AnalysisProcess, InProcessAnalysis
from core.store.sqlite.chunk_text import ChunkText
from core.store.sqlite.full_text import delete_fts_rows, reindex_fts
from core.store.sqlite.keyword import (
    KEYWORDS,
    KEYWORDS_SUFFIX,
    KeywordSnapshot,
    Postings,
    Refresher,
)
from core.store.sqlite.rows import check_chunk_docs, chunk_columns, document_rows
from core.store.sqlite.schema import connect, create_file, migrate, q, read_failure
from core.store.sqlite.sign_codes import sign_codes
from core.store.sqlite.vectors import (
    LOAD_BATCH,
    SNAPSHOTS,
    S,
    SnapshotCache,
    SnapshotKey,
    VectorSnapshot,
    normalise_rows,
    vector_blobs,
)

log = logging.getLogger(__name__)

# FTS5 queries get slow and meaningless with hundreds of OR-ed terms.
MAX_QUERY_TERMS = 64


Reader = Callable[[sqlite3.Connection, SnapshotKey, int], S]


class SQLiteIndex:
    """One named index in one SQLite file; implements `core.store.contract.IndexStore`.

    `modes` (core/store/modes.py) say how it searches and where a load's analysis runs;
    `refresher` rebuilds the keyword postings after a write (the store lends its own, so
    that one build per file runs at a time)."""

    def __init__(
        self,
        path: str | Path,
        name: str | None = None,
        *,
        create: bool = False,
        modes: StoreModes = ONE_SHOT,
        refresher: Refresher | None = None,
    ) -> None:
        self.path = Path(path)
        self.name = name or self.path.stem
        self.modes = modes
        self._refresher = refresher or Refresher()
        self._key_path = str(self.path.resolve())
        self._text = ChunkText(self._key_path)
        self._analysis: AnalysisProcess | InProcessAnalysis = (
            AnalysisProcess() if modes.analysis is AnalysisSite.CHILD else InProcessAnalysis()
        )
        # The paths the last keyword and vector searches of this handle took (search_paths).
        self._paths: dict[str, str] = {}
        self._write_lock = threading.RLock()
        self._read_lock = threading.RLock()
        self._counts: tuple[tuple[str, int], tuple[Any, ...]] | None = (
            None  # stats() per generation
        )
        if create and not self.path.exists():
            create_file(self.path)
        self._writer = connect(self.path, create=create)
        try:
            self.schema_version = migrate(self._writer, self.path)
            self._reindex_if_analyzer_changed()
            self._reader = connect(self.path, create=False, read_only=True)
        except BaseException:
            self._writer.close()
            raise

    # -- model -------------------------------------------------------------------------

    def _meta(self) -> tuple[str | None, int | None, str, str, int]:
        with self._read_lock:
            meta: tuple[str | None, int | None, str, str, int] = self._read_one(q("meta_get"))
            return meta

    @property
    def model_id(self) -> str | None:
        return self._meta()[0]

    @property
    def dim(self) -> int | None:
        return self._meta()[1]

    def bind_model(self, model_id: str, dim: int) -> None:
        """Record the index's model on first load; raise ModelMismatch on any other model."""
        if not model_id or dim <= 0:
            raise ValueError(
                f"bind_model needs a model id and a positive dim, got {model_id!r}, {dim}"
            )
        with self._writing() as conn:
            stored_model, stored_dim = conn.execute(q("meta_get")).fetchone()[:2]
            if stored_model is None:
                conn.execute(q("meta_bind_model"), {"model_id": model_id, "dim": int(dim)})
                conn.execute(q("meta_bump_generation"))
                return
            if stored_model != model_id or stored_dim != dim:
                raise ModelMismatch(
                    f"index {self.name!r} ({self.path}) was built with model {stored_model!r} "
                    f"(dim {stored_dim}), not {model_id!r} (dim {dim}); query it with the same "
                    "model or rebuild it"
                )

    # -- writing -------------------------------------------------------------------------

    def apply(self, batch: LoadBatch) -> LoadResult:
        """Replace the chunks of every document in the batch and delete `delete_doc_ids`, all in
        one transaction: on any error nothing of the batch is visible."""
        docs = document_rows(batch.documents)
        doc_ids = [d["doc_id"] for d in docs]
        cols = chunk_columns(batch.chunks)
        check_chunk_docs(cols["chunk_id"], cols["doc_id"], set(doc_ids))
        count = len(cols["chunk_id"])
        blobs = vector_blobs(batch.vectors, count, self.dim, f"index {self.name!r} ({self.path})")
        written = set(doc_ids)
        deleted_ids = [d for d in dict.fromkeys(batch.delete_doc_ids) if d not in written]
        # The write lock from here: the analysis child holds one batch at a time.
        with self._write_lock:
            # Analysis is the biggest Python cost of a load: with the child analysis site a
            # second process does it while this one writes the rows
            # (core/store/sqlite/analysis_process.py).
            bodies = self._analysis.submit(cols["context"], cols["content"])
            with self._writing() as conn:
                touched = {"doc_ids": json.dumps(doc_ids + deleted_ids)}
                delete_fts_rows(conn, self._text, touched)
                conn.execute(q("delete_vectors_of_docs"), touched)
                chunks_deleted = conn.execute(q("delete_chunks_of_docs"), touched).rowcount
                documents_deleted = conn.execute(
                    q("delete_documents"), {"doc_ids": json.dumps(deleted_ids)}
                ).rowcount
                cols["content"] = self._text.encode(conn, cols["content"])
                first = conn.execute(q("max_chunk_rowid")).fetchone()[0] + 1
                rowids = range(first, first + count)
                # Positional rows in CHUNK_SCHEMA order: binding by name costs a dict lookup
                # per column per row.
                conn.executemany(q("insert_chunk"), zip(rowids, *cols.values(), strict=True))
                conn.executemany(q("insert_vector"), zip(cols["chunk_id"], blobs, strict=True))
                conn.executemany(q("insert_fts"), zip(rowids, bodies(), strict=True))
                conn.executemany(q("upsert_document"), docs)
                conn.executemany(
                    q("stamp_document_mtime"),
                    [{"doc_id": d, "mtime": m} for d, m in batch.stamp_mtimes.items()],
                )
                conn.execute(q("meta_bump_generation"))
        return LoadResult(
            documents_written=len(docs),
            chunks_written=count,
            chunks_deleted=chunks_deleted,
            documents_deleted=documents_deleted,
        )

    def _reindex_if_analyzer_changed(self) -> None:
        """Re-index every chunk's full-text row when the table was written by another
        analyzer version: deleting its rows with this version's tokens would corrupt it."""
        # Read first: taking the write lock on every open would queue readers behind loads.
        if self._writer.execute(q("meta_fts_analyzer")).fetchone()[0] == ANALYZER_VERSION:
            return
        with self._writing() as conn:
            (version,) = conn.execute(q("meta_fts_analyzer")).fetchone()
            if version == ANALYZER_VERSION:
                return
            log.warning(
                "index %s: re-indexing its full text (analyzer version %s -> %s)",
                self.path,
                version,
                ANALYZER_VERSION,
            )
            reindex_fts(conn, self._text)
            conn.execute(q("meta_bump_generation"))

    def mark_verified(self, doc_ids: list[str], when: str) -> int:
        """Set last_verified of the documents and their chunks; returns documents updated."""
        params = {"doc_ids": json.dumps(list(doc_ids)), "when": when}
        with self._writing() as conn:
            updated = conn.execute(q("mark_verified_documents"), params).rowcount
            conn.execute(q("mark_verified_chunks"), params)
            conn.execute(q("meta_bump_generation"))
        return updated

    @contextmanager
    def _writing(self) -> Iterator[sqlite3.Connection]:
        """One write transaction: committed on success, rolled back on any error."""
        with self._write_lock:
            conn = self._writer
            try:
                conn.execute(q("tx_begin_write"))
            except sqlite3.Error as exc:
                raise StoreError(f"cannot write to index {self.path}: {exc}") from exc
            try:
                yield conn
                conn.execute(q("tx_commit"))
            except sqlite3.Error as exc:
                self._rollback()
                raise StoreError(
                    f"write to index {self.name!r} ({self.path}) failed and was rolled back: {exc}"
                ) from exc
            except BaseException:
                self._rollback()
                raise

    def _rollback(self) -> None:
        if self._writer.in_transaction:
            self._writer.execute(q("tx_rollback"))

    # -- reading -------------------------------------------------------------------------

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

    def document_states(self) -> dict[str, DocState]:
        _, rows = self._read_all(q("document_states"))
        return {
            doc_id: DocState(content_hash=h, mtime=m, source_path=p, last_verified=v)
            for doc_id, h, m, p, v in rows
        }

    def document_titles(self) -> list[tuple[str, str]]:
        _, rows = self._read_all(q("document_titles"))
        return [(str(title), str(chunk_id)) for title, chunk_id in rows]

    def chunk_symbols(self) -> list[Declaration]:
        _, rows = self._read_all(q("chunk_symbols"))
        return [Declaration(str(s), str(k or ""), str(d), str(c)) for s, k, d, c in rows]

    def fetch(self, chunk_ids: list[str]) -> dict[str, dict[str, Any]]:
        """Full chunk records by id (JSON columns decoded); unknown ids are left out."""
        if not chunk_ids:
            return {}
        with self._read_lock:
            names, rows = self._read_all(
                q("fetch_chunks"), {"chunk_ids": json.dumps(list(chunk_ids))}
            )
            at = names.index("content")
            rows = [
                (*row[:at], self._text.decode(self._reader, row[at]), *row[at + 1 :])
                for row in rows
            ]
        return {row[0]: decode_chunk_row(names, row) for row in rows}

    def snapshot(self) -> VectorSnapshot:
        """The in-memory vectors and filter columns of the last commit (reloaded if stale),
        with sign codes when this handle's modes search its size by a shortlist."""
        snap = self._derived(SNAPSHOTS, self._read_vectors, "vectors of ")
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
        conn = connect(self.path, create=False, read_only=True)
        try:
            KEYWORDS.put(self._snapshot_of(conn, self._read_keywords, "keyword postings of "))
        finally:
            conn.close()

    def _derived(self, cache: SnapshotCache[S], read: Reader[S], what: str) -> S:
        """The snapshot `read` makes of the last commit, cached per generation."""
        with self._read_lock:
            cached = cache.get(self._generation_key())
            if cached is not None:
                return cached
            snap = self._snapshot_of(self._reader, read, what)
            cache.put(snap)
            return snap

    def _generation_key(self) -> SnapshotKey:
        instance_id, generation = self._read_one(q("meta_generation"))
        return (self._key_path, instance_id, generation)

    def _snapshot_of(self, conn: sqlite3.Connection, read: Reader[S], what: str) -> S:
        try:
            # One read transaction so the rows belong to exactly this generation.
            conn.execute(q("tx_begin_read"))
            try:
                _, dim, _, instance_id, generation = conn.execute(q("meta_get")).fetchone()
                return read(conn, (self._key_path, instance_id, generation), int(dim or 0))
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
        return [Hit(chunk_id, -rank) for chunk_id, rank in rows]

    def stats(self) -> dict[str, Any]:
        """Counts, model, file size and schema version. Cheap enough to call per query: the
        counts are cached per generation (they only change when a write bumps it)."""
        with self._read_lock:
            try:
                self._reader.execute(q("tx_begin_read"))
                try:
                    meta = self._reader.execute(q("meta_get")).fetchone()
                    key = (meta[3], meta[4])
                    if self._counts is None or self._counts[0] != key:
                        self._counts = (key, self._reader.execute(q("stats_counts")).fetchone())
                finally:
                    self._reader.execute(q("tx_commit"))
            except sqlite3.Error as exc:
                raise read_failure(self.path, exc) from exc
            documents, chunks, vectors, fts_rows, version = self._counts[1]
        model_id, dim, created_at, _, generation = meta
        size = sum(p.stat().st_size for p in (self.path, Path(f"{self.path}-wal")) if p.exists())
        return {
            "name": self.name,
            "path": str(self.path),
            "documents": documents,
            "chunks": chunks,
            "vectors": vectors,
            "fts_rows": fts_rows,
            "model_id": model_id,
            "dim": dim,
            "created_at": created_at,
            "file_bytes": size,
            "schema_version": version,
            "generation": generation,
            # The paths its searches take (the handle's modes; core/store/modes.py).
            "keyword_path": self.modes.keyword.value,
            "vector_path": self.modes.vector_path(vectors).value,
        }

    def close(self) -> None:
        with self._write_lock, self._read_lock:
            # The writer last: the last connection to close checkpoints and removes the WAL,
            # which a query_only reader cannot do.
            for conn in (self._reader, self._writer):
                conn.close()
            self._analysis.close()

    def __enter__(self) -> SQLiteIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"SQLiteIndex({str(self.path)!r})"
