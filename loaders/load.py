"""Bulk load of chunked, embedded documents into an index store.

Each `LoadBatch` holds whole documents, and a store applies a batch in one transaction, so a
reader sees every document either before or after the run, and a run killed between batches
leaves the index consistent: the documents not yet applied are still "changed" next time.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import date

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from chunkers.model import Document
from core.store.contract import REFERENCE_SCHEMA, IndexStore, LoadBatch, LoadResult
from loaders.arrow_tables import documents_to_table

DOCS_PER_BATCH = 256


def document_rows(documents: list[Document], today: date | None = None) -> list[dict]:
    verified_default = (today or date.today()).isoformat()
    return [
        {
            "doc_id": doc.doc_id,
            "source_path": doc.source_file,
            "content_hash": doc.content_hash,
            # Set by the batch that completes the document's file (LoadBatch.stamp_mtimes).
            "mtime": None,
            "last_verified": str(doc.fields.get("last_verified") or verified_default)[:10],
            "metadata": json.dumps(
                {"title": doc.title, "url": doc.url, "path": doc.path, **doc.metadata},
                ensure_ascii=False,
                default=str,
            ),
        }
        for doc in documents
    ]


def fill_last_verified(chunks: pa.Table, documents: pa.Table) -> pa.Table:
    """Chunks without their own last_verified date take their document's."""
    by_doc = dict(
        zip(
            documents.column("doc_id").to_pylist(),
            documents.column("last_verified").to_pylist(),
            strict=True,
        )
    )
    own = chunks.column("last_verified").to_pylist()
    docs = chunks.column("doc_id").to_pylist()
    filled = [mine or by_doc.get(doc) for mine, doc in zip(own, docs, strict=True)]
    index = chunks.schema.get_field_index("last_verified")
    return chunks.set_column(index, "last_verified", pa.array(filled, pa.string()))


def load(
    index: IndexStore,
    documents: pa.Table,
    chunks: pa.Table,
    vectors: np.ndarray | None,
    deleted_ids: list[str],
    *,
    docs_per_batch: int = DOCS_PER_BATCH,
    on_batch: Callable[[int, int], None] | None = None,
    before_batch: Callable[[int], None] | None = None,
    stamp_mtimes: dict[str, float] | None = None,
    references: pa.Table | None = None,
) -> LoadResult:
    """Apply documents (with their chunks and row-aligned vectors, or None: the chunks stay
    pending for the vector phase) and deletions in batches of
    whole documents. `stamp_mtimes` (doc_id -> source mtime) marks files complete, in the
    last batch with the deletions. `on_batch(done_chunks, total_chunks)` reports progress;
    `before_batch` is a hook for fault-injection tests."""
    if vectors is not None and len(chunks) != len(vectors):
        raise ValueError(f"{len(chunks)} chunks but {len(vectors)} vectors")
    chunks = fill_last_verified(chunks, documents)
    doc_ids = documents.column("doc_id").to_pylist()
    totals = [0, 0, 0, 0]
    done = 0
    starts = range(0, max(len(doc_ids), 1), docs_per_batch)
    for number, start in enumerate(starts):
        if before_batch:
            before_batch(number)
        batch_docs = documents.slice(start, docs_per_batch)
        wanted = pa.array(batch_docs.column("doc_id").to_pylist(), pa.string())
        mask = pc.is_in(chunks.column("doc_id"), value_set=wanted)
        positions = np.flatnonzero(mask.to_numpy(zero_copy_only=False))
        last = start + docs_per_batch >= len(doc_ids)
        batch = LoadBatch(
            documents=batch_docs,
            chunks=chunks.take(pa.array(positions, pa.int64())),
            vectors=None if vectors is None else vectors[positions],
            # Deletions and file stamps ride with the last batch: a run killed earlier has
            # deleted nothing yet and marked no file complete, so the next run reads them all.
            delete_doc_ids=deleted_ids if last else [],
            stamp_mtimes=dict(stamp_mtimes or {}) if last else {},
            references=_of_docs(references, wanted),
        )
        result = index.apply(batch)
        totals = [
            totals[0] + result.documents_written,
            totals[1] + result.chunks_written,
            totals[2] + result.chunks_deleted,
            totals[3] + result.documents_deleted,
        ]
        done += len(positions)
        if on_batch:
            on_batch(done, len(chunks))
    return LoadResult(*totals)


def empty_documents() -> pa.Table:
    return documents_to_table([])


def _of_docs(references: pa.Table | None, doc_ids: pa.Array) -> pa.Table:
    """The reference rows of these documents (none when the load carries none)."""
    if references is None:
        return REFERENCE_SCHEMA.empty_table()
    return references.filter(pc.is_in(references.column("doc_id"), value_set=doc_ids))
