"""The embedded index: one SQLite file per named index, no server.

Writes go through one connection in `BEGIN IMMEDIATE` transactions, one per `LoadBatch`;
reads use a second connection, opened read-only. A handle opened to write brings the file up
to date when it opens (migrations, a full-text re-index after an analyzer change, the text_key
fill: upgrade.py); a handle that only reads has no write connection at all, and refuses a
file older than the code with SchemaOutdated rather than change it. WAL mode gives every read
statement a snapshot of the last commit, so a search sees each document entirely before or entirely after a batch. The
searches, and the in-memory structures they read, are index_search.py's.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from core.store.bm25 import fts5_idf
from core.store.contract import (
    DocState,
    LoadBatch,
    LoadResult,
    ModelMismatch,
    PendingChunk,
    ShardMark,
    StoreError,
    decode_chunk_row,
    decode_fusion_row,
    precisions_of,
)
from core.store.modes import ONE_SHOT, AnalysisSite, StoreModes
from core.store.references import reference_rows
from core.store.sqlite.analysis_process import AnalysisProcess, InProcessAnalysis
from core.store.sqlite.chunk_text import ChunkText
from core.store.sqlite.full_text import delete_fts_rows
from core.store.sqlite.keyword import Refresher
from core.store.sqlite.lookups import Lookups
from core.store.sqlite.rows import check_chunk_docs, chunk_columns, document_rows
from core.store.sqlite.schema import (
    connect,
    connect_reader,
    create_file,
    migrate,
    q,
    read_failure,
)
from core.store.sqlite.upgrade import check_current, fill_text_keys, reindex_if_analyzer_changed
from core.store.sqlite.vectors import vector_blobs
from core.store.text_key import text_key

log = logging.getLogger(__name__)


class SQLiteIndex(Lookups):
    """One named index in one SQLite file; implements `core.store.contract.IndexStore`.

    `modes` (core/store/modes.py) say how it searches and where a load's analysis runs;
    `refresher` rebuilds the keyword postings after a write (the store lends its own, so
    that one build per file runs at a time)."""

    loads_before_binding = True  # vectors have a table of their own

    def __init__(
        self,
        path: str | Path,
        name: str | None = None,
        *,
        create: bool = False,
        write: bool = False,
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
        self._counts: tuple[tuple[str, int, int], tuple[Any, ...]] | None = (
            None  # stats() per generation
        )
        if create and not self.path.exists():
            create_file(self.path)
        # None on a handle that only reads: nothing can write through it (_writing).
        self._writer: sqlite3.Connection | None = None
        if write or create:
            self._writer = connect(self.path, create=create)
        reader = None
        try:
            if self._writer is not None:
                self.schema_version = migrate(self._writer, self.path)
                reindex_if_analyzer_changed(self._writer, self._writing, self._text, self.path)
                fill_text_keys(self._writer, self._writing, self._text, self.path)
            self._reader = reader = connect_reader(self.path)
            if self._writer is None:
                self.schema_version = check_current(self._reader, self.path, self.name)
        except BaseException:
            for conn in (self._writer, reader):
                if conn is not None:
                    conn.close()
            raise

    @property
    def writes(self) -> bool:
        """Whether this handle was opened to write (`write` or `create`)."""
        return self._writer is not None

    # -- model -------------------------------------------------------------------------

    def bind_model(
        self,
        model_id: str,
        dim: int,
        precision: str = "fp32",
        shares_with: Collection[str] = (),
    ) -> None:
        """Record the index's model and precision on first load; raise ModelMismatch on any
        other model, or on a precision that may not share the index with those it holds."""
        if not model_id or dim <= 0:
            raise ValueError(
                f"bind_model needs a model id and a positive dim, got {model_id!r}, {dim}"
            )
        with self._writing() as conn:
            stored_model, stored_dim = conn.execute(q("meta_get")).fetchone()[:2]
            if stored_model is None:
                conn.execute(q("meta_bind_model"), {"model_id": model_id, "dim": int(dim)})
                conn.execute(q("meta_set_precision"), {"precision": precision})
                conn.execute(q("meta_bump_generation"))
                return
            if stored_model != model_id or stored_dim != dim:
                raise ModelMismatch(
                    f"index {self.name!r} ({self.path}) was built with model {stored_model!r} "
                    f"(dim {stored_dim}), not {model_id!r} (dim {dim}); query it with the same "
                    "model or rebuild it"
                )
            held = set(precisions_of(conn.execute(q("meta_precision")).fetchone()[0]))
            if precision in held:
                return
            allowed = {precision, *shares_with}
            if not held <= allowed:
                raise ModelMismatch(
                    f"index {self.name!r} ({self.path}) holds {model_id!r} vectors in "
                    f"{'+'.join(sorted(held))}; {precision} vectors may join them only when "
                    "every precision involved held the model's quality guard. Embed in "
                    f"{' or '.join(sorted(held))} (RAG_EMBEDDING_PRECISION) or rebuild the index"
                )
            joined = "+".join(sorted(held | {precision}))
            conn.execute(q("meta_set_precision"), {"precision": joined})
            conn.execute(q("meta_bump_generation"))

    # -- writing -------------------------------------------------------------------------

    def apply(self, batch: LoadBatch) -> LoadResult:
        """Replace the chunks of every document in the batch and delete `delete_doc_ids`, all in
        one transaction: on any error nothing of the batch is visible."""
        docs = document_rows(batch.documents)
        doc_ids = [d["doc_id"] for d in docs]
        cols = chunk_columns(batch.chunks)
        check_chunk_docs(cols["chunk_id"], cols["doc_id"], set(doc_ids))
        count = len(cols["chunk_id"])
        refs = reference_rows(batch.references, cols["chunk_id"])
        blobs = (
            []
            if batch.vectors is None
            else vector_blobs(batch.vectors, count, self.dim, f"index {self.name!r} ({self.path})")
        )
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
                conn.execute(q("delete_references_of_docs"), touched)
                chunks_deleted = conn.execute(q("delete_chunks_of_docs"), touched).rowcount
                documents_deleted = conn.execute(
                    q("delete_documents"), {"doc_ids": json.dumps(deleted_ids)}
                ).rowcount
                keys = [text_key(content) for content in cols["content"]]
                cols["content"] = self._text.encode(conn, cols["content"])
                first = conn.execute(q("max_chunk_rowid")).fetchone()[0] + 1
                rowids = range(first, first + count)
                # Positional rows in CHUNK_SCHEMA order: binding by name costs a dict lookup
                # per column per row.
                conn.executemany(q("insert_chunk"), zip(rowids, *cols.values(), keys, strict=True))
                if blobs:
                    conn.executemany(q("insert_vector"), zip(cols["chunk_id"], blobs, strict=True))
                conn.executemany(q("insert_fts"), zip(rowids, bodies(), strict=True))
                conn.executemany(q("insert_reference"), refs)
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

    def put_vectors(
        self,
        chunk_ids: list[str],
        content_hashes: list[str],
        vectors: np.ndarray,
        *,
        shard: ShardMark | None = None,
    ) -> int:
        """Give chunks their vectors in one transaction, only those still holding that
        content hash and no vector yet, with the shard's done-record when given; returns how
        many were written."""
        if len(chunk_ids) != len(content_hashes):
            raise ValueError(f"{len(chunk_ids)} chunk ids but {len(content_hashes)} hashes")
        blobs = vector_blobs(
            vectors, len(chunk_ids), self.dim, f"index {self.name!r} ({self.path})"
        )
        if not blobs and shard is None:
            return 0
        with self._writing() as conn:
            before = conn.total_changes
            conn.executemany(
                q("insert_pending_vector"),
                [
                    {"chunk_id": c, "content_hash": h, "embedding": b}
                    for c, h, b in zip(chunk_ids, content_hashes, blobs, strict=True)
                ],
            )
            written = conn.total_changes - before
            if written:
                # Not `generation`: no text changed, so the keyword postings stay (0013).
                conn.execute(q("meta_bump_vector_generation"))
            if shard is not None:
                conn.execute(
                    q("record_shard_done"),
                    {"shard_id": shard.shard_id, "written": written, "attempts": shard.attempts},
                )
        return written

    def record_shard_failure(self, shard: ShardMark, error: str) -> None:
        with self._writing() as conn:
            conn.execute(
                q("record_shard_failed"),
                {"shard_id": shard.shard_id, "attempts": shard.attempts, "error": error},
            )

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
            if conn is None:
                raise StoreError(
                    f"index {self.name!r} ({self.path}) was opened to read only; open it with "
                    "write=True to change it"
                )
            try:
                conn.execute(q("tx_begin_write"))
            except sqlite3.Error as exc:
                raise StoreError(f"cannot write to index {self.path}: {exc}") from exc
            try:
                yield conn
                conn.execute(q("tx_commit"))
            except sqlite3.Error as exc:
                self._rollback(conn)
                raise StoreError(
                    f"write to index {self.name!r} ({self.path}) failed and was rolled back: {exc}"
                ) from exc
            except BaseException:
                self._rollback(conn)
                raise

    @staticmethod
    def _rollback(conn: sqlite3.Connection) -> None:
        if conn.in_transaction:
            conn.execute(q("tx_rollback"))

    # -- reading -------------------------------------------------------------------------

    def document_states(self) -> dict[str, DocState]:
        _, rows = self._read_all(q("document_states"))
        return {
            doc_id: DocState(content_hash=h, mtime=m, source_path=p, last_verified=v)
            for doc_id, h, m, p, v in rows
        }

    def pending_vectors(self, after: str, limit: int) -> list[PendingChunk]:
        """Up to `limit` chunks without a vector, in chunk_id order, after `after`."""
        with self._read_lock:
            _, rows = self._read_all(
                q("pending_vector_rows"), {"after": after, "limit": int(limit)}
            )
            return [
                PendingChunk(
                    chunk_id,
                    doc_id,
                    content_hash,
                    context,
                    self._text.decode(self._reader, body) or "",  # content is NOT NULL
                    language,
                )
                for chunk_id, doc_id, content_hash, context, body, language in rows
            ]

    def without_vectors(self, chunk_ids: list[str]) -> set[str]:
        """Those of `chunk_ids` that the index holds without a vector; no chunk is read
        while its counts (cached per generation, as `stats` reads them) say every chunk has
        one."""
        if not chunk_ids:
            return set()
        _, (_, chunks, vectors, _, _) = self._meta_and_counts()
        if int(vectors or 0) >= int(chunks or 0):
            return set()
        _, rows = self._read_all(
            q("chunks_without_vector"), {"chunk_ids": json.dumps(list(chunk_ids))}
        )
        return {str(chunk_id) for (chunk_id,) in rows}

    def bm25_idf(self, chunks: int, containing: int) -> float:
        return fts5_idf(chunks, containing)

    def fusion_calibration(self) -> str | None:
        with self._read_lock:
            value = self._read_one(q("meta_fusion_calibration"))[0]
        return None if value is None else str(value)

    def record_fusion_calibration(self, record: str | None) -> None:
        with self._writing() as conn:
            conn.execute(q("meta_set_fusion_calibration"), {"calibration": record})

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

    def fetch_light(self, chunk_ids: list[str]) -> dict[str, dict[str, Any]]:
        """The FUSION_COLUMNS of chunks by id; unknown ids are left out. No text is read."""
        if not chunk_ids:
            return {}
        _, rows = self._read_all(q("fetch_fusion_rows"), {"chunk_ids": json.dumps(chunk_ids)})
        return {row[0]: decode_fusion_row(row) for row in rows}

    def stats(self) -> dict[str, Any]:
        """Counts, model, file size and schema version. Cheap enough to call per query: the
        counts are cached per generation (they only change when a write bumps it)."""
        meta, counts = self._meta_and_counts()
        documents, chunks, vectors, fts_rows, version = counts
        model_id, dim, created_at, _, generation, vector_generation = meta
        precision = self.embedding_precision if model_id is not None else None
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
            "embedding_precision": precision,
            "created_at": created_at,
            "file_bytes": size,
            "schema_version": version,
            "generation": generation,
            "vector_generation": vector_generation,
            # The paths its searches take (the handle's modes; core/store/modes.py).
            "keyword_path": self.modes.keyword.value,
            "vector_path": self.modes.vector_path(vectors).value,
        }

    def _meta_and_counts(self) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        """The meta row and the stats counts of the last commit, the counts cached per
        (instance, generation, vector generation)."""
        with self._read_lock:
            try:
                self._reader.execute(q("tx_begin_read"))
                try:
                    meta = self._reader.execute(q("meta_get")).fetchone()
                    key = (meta[3], meta[4], meta[5])
                    if self._counts is None or self._counts[0] != key:
                        self._counts = (key, self._reader.execute(q("stats_counts")).fetchone())
                finally:
                    self._reader.execute(q("tx_commit"))
            except sqlite3.Error as exc:
                raise read_failure(self.path, exc) from exc
            return meta, self._counts[1]

    def close(self) -> None:
        with self._write_lock, self._read_lock:
            # The writer last: the last connection to close checkpoints and removes the WAL,
            # which a read-only connection cannot do (a handle that only reads leaves them).
            for conn in (self._reader, self._writer):
                if conn is not None:
                    conn.close()
            self._analysis.close()

    def __enter__(self) -> SQLiteIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"SQLiteIndex({str(self.path)!r})"
