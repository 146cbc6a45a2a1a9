"""One named index of the TiDB store: its model, writes (one transaction per group of whole
documents, retried from the start after a transient error) and reads. The connection it runs
on is handle.py's, its searches are index_search.py's.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import numpy as np

from core.store.bm25 import lucene_idf
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
)
from core.store.references import reference_rows, rows_of_docs
from core.store.tidb.bm25 import df_changes, df_shard
from core.store.tidb.conn import RETRY_ONCE_CODES
from core.store.tidb.index_search import EXACT, HNSW, keyword_path
from core.store.tidb.load import LoadMethod, PreparedRows, document_groups, prepare, write_rows
from core.store.tidb.lookups import Lookups
from core.store.tidb.pending import done_record, failure_record, pending_chunks, vector_updates
from core.store.tidb.rows import (
    check_chunks,
    document_rows,
    normalised,
    refuse_zero_vectors,
    subset,
)
from core.store.tidb.schema import (
    add_vector_column,
    bm25_mode,
    compact_tiflash,
    now,
    tiflash_progress,
)
from core.store.tidb.search import VectorPlan
from core.store.tidb.sql import placeholders


class TiDBIndex(Lookups):
    """One named index; implements `core.store.contract.IndexStore` (and `HybridSearch`)."""

    # The chunk rows' vector column is added by bind_model, with the model's dimension.
    loads_before_binding = False

    # -- model ---------------------------------------------------------------------------

    @property
    def model_id(self) -> str | None:
        model_id: str | None = self._meta()[0]
        return model_id

    @property
    def dim(self) -> int | None:
        dim: int | None = self._meta()[1]
        return dim

    def bind_model(
        self,
        model_id: str,
        dim: int,
        precision: str = "fp32",
        shares_with: Collection[str] = (),
    ) -> None:
        """Record the index's model on first load (adding the VECTOR(dim) column and what the
        server offers for search); raise ModelMismatch on any other model. The TiDB meta row
        records no precision yet: it takes fp32 vectors and those of precisions that held the
        model's quality guard (interchangeable with fp32), and refuses any other."""
        if not model_id or dim <= 0:
            raise ValueError(
                f"bind_model needs a model id and a positive dim, got {model_id!r}, {dim}"
            )
        if precision != "fp32" and "fp32" not in shares_with:
            raise ModelMismatch(
                f"index {self.name!r} ({self.store.display}): {precision} vectors of "
                f"{model_id!r} did not hold the quality guard, and a TiDB index records no "
                "precision to keep them apart from fp32 ones; embed in fp32"
            )

        def claim(cur: Any) -> bool:
            cur.execute(self._sql("meta_get_for_update"))
            stored_model, stored_dim = cur.fetchone()
            if stored_model is None:
                cur.execute(self._sql("meta_bind_model"), {"model_id": model_id, "dim": dim})
                return True
            if stored_model != model_id or stored_dim != dim:
                raise ModelMismatch(
                    f"index {self.name!r} ({self.store.display}) was built with model "
                    f"{stored_model!r} (dim {stored_dim}), not {model_id!r} (dim {dim}); "
                    "query it with the same model or rebuild it"
                )
            return False

        claimed = self._write("binding the model", claim)
        # DDL commits implicitly, so it runs after the claim's transaction, statement by
        # statement. A process that died anywhere in it left capabilities_at unset: the next
        # bind_model sees that and finishes the job (each step is idempotent).
        if not claimed and self._capabilities_done():
            return
        server = self.store.server

        def capabilities(cur: Any) -> None:
            vector_index = add_vector_column(self._conn, self.tables, server, dim)
            mode = bm25_mode(self._conn, self.tables, server, recorded=self._meta_row(cur)[4])
            cur.execute(
                self._sql("meta_set_capabilities"),
                {"vector_index": vector_index, "bm25_mode": mode, "at": now()},
            )

        self._run("adding the vector column", capabilities)

    def _capabilities_done(self) -> bool:
        def read(cur: Any) -> bool:
            cur.execute(self._sql("meta_capabilities_at"))
            return cur.fetchone()[0] is not None

        return self._run("reading the schema", read)

    def _meta_row(self, cur: Any) -> tuple[Any, ...]:
        cur.execute(self._sql("meta_get"))
        row: tuple[Any, ...] = cur.fetchone()
        return row

    # -- writing -------------------------------------------------------------------------

    def apply(self, batch: LoadBatch) -> LoadResult:
        """Replace the chunks (and postings) of every document in the batch and delete
        `delete_doc_ids`. A batch within TiDB's transaction budget is one transaction; a
        bigger one is split into transactions of whole documents, deletions in the last."""
        docs = document_rows(batch.documents)
        doc_ids = [d["doc_id"] for d in docs]
        chunks = batch.chunks
        check_chunks(chunks, set(doc_ids))
        meta = self._meta()
        dim, native = meta[1], meta[4] == "native"
        if chunks.num_rows and dim is None:
            raise StoreError(
                f"index {self.name!r} ({self.store.display}): bind_model before loading"
            )
        if chunks.num_rows and batch.vectors is not None:
            shape = np.asarray(batch.vectors).shape
            if shape != (chunks.num_rows, dim):
                raise StoreError(
                    f"index {self.name!r}: expected vectors of shape ({chunks.num_rows}, {dim}), "
                    f"got {shape}"
                )
            refuse_zero_vectors(chunks.column("chunk_id").to_pylist(), batch.vectors)
        vectors = (
            normalised(batch.vectors)
            if chunks.num_rows and batch.vectors is not None
            else batch.vectors
        )
        rows = prepare(chunks, vectors, docs, with_body=native)
        written = set(doc_ids)
        deleted = [d for d in dict.fromkeys(batch.delete_doc_ids) if d not in written]
        chunk_doc_ids = chunks.column("doc_id").to_pylist()
        refs = reference_rows(batch.references, chunks.column("chunk_id").to_pylist())
        groups = document_groups(doc_ids, chunk_doc_ids, rows.chunk_bytes)
        totals = [0, 0, 0, 0]
        for number, group in enumerate(groups):
            last = number == len(groups) - 1
            part = rows if len(groups) == 1 else subset(rows, chunk_doc_ids, docs, set(group))
            group_refs = refs if len(groups) == 1 else rows_of_docs(refs, set(group))
            result = self._apply_group(
                group, part, group_refs, deleted if last else [], batch.stamp_mtimes if last else {}
            )
            totals = [a + b for a, b in zip(totals, result, strict=True)]
        self._compact_after(totals[1], vector_index=meta[3])
        return LoadResult(*totals)

    def _compact_after(self, chunks_written: int, *, vector_index: str) -> None:
        """Compact the TiFlash replica once this handle has written enough chunks since the
        last compaction, so that they are searched through the HNSW index."""
        if vector_index != HNSW:
            return
        self._uncompacted += chunks_written
        if self._uncompacted < self.store.settings.tidb_compact_after_rows:
            return
        self._uncompacted = 0
        self._run("compacting TiFlash", lambda cur: compact_tiflash(self._conn, self.tables))

    def _apply_group(
        self,
        doc_ids: list[str],
        rows: PreparedRows,
        refs: list[tuple[Any, ...]],
        deleted: list[str],
        stamps: dict[str, float],
    ) -> list[int]:
        touched = doc_ids + deleted
        method = LoadMethod(self.store.settings.tidb_load_method)

        # Sorted, so that loaders of overlapping document sets lock them in one order.
        documents = sorted(rows.documents, key=lambda row: str(row[0]))

        def work(cur: Any) -> list[int]:
            chunks_deleted = documents_deleted = old_docs = old_len = 0
            old_terms: list[tuple[str, int]] = []
            # The documents' own rows first: writing a primary key locks it on TiDB and on
            # MariaDB even when the row is new, so a second loader of the same new document
            # waits here and then sees the first one's chunks. A SELECT ... FOR UPDATE of
            # chunks that do not exist yet locks nothing on TiDB (no gap locks), so both
            # loaders would insert the same chunk ids and the second would fail with 1062.
            if documents:
                cur.executemany(self._sql("upsert_documents"), documents)
            if touched:
                marks, names = placeholders("d", len(touched))
                ids = {n: touched[i] for n, i in names.items()}
                cur.execute(self._sql("corpus_of_docs", doc_ids=marks), ids)
                old_docs, old_len = (int(v) for v in cur.fetchone())
                cur.execute(self._sql("postings_terms_of_docs", doc_ids=marks), ids)
                old_terms = list(cur.fetchall())
                cur.execute(self._sql("delete_postings_of_docs", doc_ids=marks), ids)
                cur.execute(self._sql("delete_references_of_docs", doc_ids=marks), ids)
                chunks_deleted = cur.execute(self._sql("delete_chunks_of_docs", doc_ids=marks), ids)
            if deleted:
                marks, names = placeholders("d", len(deleted))
                documents_deleted = cur.execute(
                    self._sql("delete_documents", doc_ids=marks),
                    {n: deleted[i] for n, i in names.items()},
                )
            write_rows(cur, self.tables, rows, method, self.store.staging_dir)
            if refs:
                cur.executemany(self._sql("insert_references"), refs)
            df = df_changes(rows.postings, old_terms, df_shard(touched[0])) if touched else []
            if df:
                cur.executemany(self._sql("term_df_add"), df)
            if stamps:
                cur.executemany(
                    self._sql("stamp_document_mtime"),
                    [{"doc_id": d, "mtime": m} for d, m in stamps.items()],
                )
            cur.execute(
                self._sql("meta_add_corpus"),
                {"docs": rows.chunks.num_rows - old_docs, "total_len": rows.total_len - old_len},
            )
            return [len(rows.documents), rows.chunks.num_rows, chunks_deleted, documents_deleted]

        return self._write("loading a batch", work, once=RETRY_ONCE_CODES)

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
        meta = self._meta()
        rows = vector_updates(chunk_ids, content_hashes, vectors, meta[1], self.name)
        if not rows and shard is None:
            return 0

        def work(cur: Any) -> int:
            # One UPDATE per row (PyMySQL batches only INSERTs): ~0.2 ms each on a LAN, next
            # to the seconds a page of chunks takes to embed.
            written = int(cur.executemany(self._sql("put_pending_vector"), rows) or 0)
            if shard is not None:
                cur.execute(self._sql("record_shard_done"), done_record(shard, written))
            return written

        written = self._write("writing vectors", work)
        self._compact_after(written, vector_index=meta[3])
        return written

    def record_shard_failure(self, shard: ShardMark, error: str) -> None:
        def work(cur: Any) -> None:
            cur.execute(self._sql("record_shard_failed"), failure_record(shard, error))

        self._write("recording a failed shard", work)

    def mark_verified(self, doc_ids: list[str], when: str) -> int:
        """Set last_verified of the documents and their chunks; returns documents updated."""
        wanted = list(dict.fromkeys(doc_ids))
        if not wanted:
            return 0
        marks, names = placeholders("d", len(wanted))
        params = {"when": when, **{n: wanted[i] for n, i in names.items()}}

        def work(cur: Any) -> int:
            updated = cur.execute(self._sql("mark_verified_documents", doc_ids=marks), params)
            cur.execute(self._sql("mark_verified_chunks", doc_ids=marks), params)
            return int(updated)

        return self._write("marking documents verified", work)

    # -- reading -------------------------------------------------------------------------

    def document_states(self) -> dict[str, DocState]:
        rows = self._rows("reading documents", self._sql("document_states"))
        return {
            doc_id: DocState(content_hash=h, mtime=m, source_path=p, last_verified=v)
            for doc_id, h, m, p, v in rows
        }

    def pending_vectors(self, after: str, limit: int) -> list[PendingChunk]:
        return pending_chunks(
            self._rows(
                "reading chunks without vectors",
                self._sql("pending_vector_rows"),
                {"after": after, "limit": int(limit)},
            )
        )

    def without_vectors(self, chunk_ids: list[str]) -> set[str]:
        """Those of `chunk_ids` that the index holds without a vector (embedding NULL)."""
        wanted = list(dict.fromkeys(chunk_ids))
        if not wanted:
            return set()
        marks, names = placeholders("c", len(wanted))
        rows = self._rows(
            "reading chunks without vectors",
            self._sql("chunks_without_vector", chunk_ids=marks),
            {n: wanted[i] for n, i in names.items()},
        )
        return {str(chunk_id) for (chunk_id,) in rows}

    def bm25_idf(self, chunks: int, containing: int) -> float:
        return lucene_idf(chunks, containing)

    def fusion_calibration(self) -> str | None:
        rows = self._rows("reading the calibration", self._sql("meta_fusion_calibration"))
        value = rows[0][0] if rows else None
        return None if value is None else str(value)

    def record_fusion_calibration(self, record: str | None) -> None:
        def write(cur: Any) -> None:
            cur.execute(self._sql("meta_set_fusion_calibration"), {"calibration": record})

        self._write("recording the calibration", write)

    def fetch(self, chunk_ids: list[str]) -> dict[str, dict[str, Any]]:
        """Full chunk records by id (JSON columns decoded); unknown ids are left out."""
        wanted = list(dict.fromkeys(chunk_ids))
        if not wanted:
            return {}
        marks, names = placeholders("c", len(wanted))

        def read(cur: Any) -> dict[str, dict[str, Any]]:
            cur.execute(
                self._sql("fetch_chunks", chunk_ids=marks), {n: wanted[i] for n, i in names.items()}
            )
            columns = [d[0] for d in cur.description]
            return {row[0]: decode_chunk_row(columns, row) for row in cur.fetchall()}

        return self._run("fetching chunks", read)

    def fetch_light(self, chunk_ids: list[str]) -> dict[str, dict[str, Any]]:
        """The FUSION_COLUMNS of chunks by id; unknown ids are left out. No text is read."""
        wanted = list(dict.fromkeys(chunk_ids))
        if not wanted:
            return {}
        marks, names = placeholders("c", len(wanted))
        rows = self._rows(
            "fetching chunks",
            self._sql("fetch_fusion_rows", chunk_ids=marks),
            {n: wanted[i] for n, i in names.items()},
        )
        return {row[0]: decode_fusion_row(row) for row in rows}

    def stats(self) -> dict[str, Any]:
        """Counts, model, schema version, search modes and (TiDB) HNSW build progress."""
        meta = self._meta()
        model_id, dim, created_at, vector_index, mode, bm25_docs, _ = meta
        documents, chunks, version = self._rows("reading stats", self._sql("stats_counts"))[0]
        vectors = 0
        if dim is not None:
            vectors = self._rows("reading stats", self._sql("stats_vectors"))[0][0]
        progress = self._run(
            "reading TiFlash index progress",
            lambda cur: tiflash_progress(self._conn, self.tables, self.store.server),
        )
        return {
            "name": self.name,
            "path": f"{self.store.display}#{self.name}",
            "server": self.store.version,
            "documents": int(documents),
            "chunks": int(chunks),
            "vectors": int(vectors),
            "fts_rows": int(bm25_docs),
            "model_id": model_id,
            "dim": dim,
            "created_at": created_at,
            "schema_version": int(version),
            "vector_index": vector_index,
            "bm25": mode,
            "vector_index_progress": progress,
            # The paths its searches take (core/store/tidb/index_search.py names them).
            "keyword_path": keyword_path(mode),
            "vector_path": HNSW if self._vector_plan(vector_index) is VectorPlan.ANN else EXACT,
        }

    def __enter__(self) -> TiDBIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"TiDBIndex({self.store.display!r}, {self.name!r})"
