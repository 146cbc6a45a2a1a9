"""What the embed stage keeps: a document whose chunks all have a usable vector. A vector that
is all zeros has no direction (its cosine distance to anything is undefined: NULL in TiDB,
which refuses such a batch, core/store/tidb/rows.py), and one with NaN or infinity cannot be
stored; either would fail the whole load batch. Screened here instead, the document is a named
reject and the good documents of the batch are loaded."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from chunkers.model import Document, Reject
from chunkers.pipeline import reject_of

SHOWN_CHUNKS = 3


@dataclass(frozen=True)
class Screened:
    """The rows to load, and the documents left out, each with its reject."""

    documents: pa.Table
    chunks: pa.Table
    references: pa.Table
    vectors: np.ndarray
    rejected: dict[str, Reject]  # doc_id -> its reject


def screen_vectors(
    documents: pa.Table,
    chunks: pa.Table,
    references: pa.Table,
    vectors: np.ndarray,
    origins: Mapping[str, Document],
) -> Screened:
    """Leave out every document with a chunk whose vector is all zeros or not finite, whole
    (a document is replaced whole or not at all, so its previous version stays indexed).
    `origins` gives each document's origin for its reject."""
    arr = np.asarray(vectors, dtype=np.float32)
    bad = ~arr.any(axis=1) | ~np.isfinite(arr).all(axis=1) if len(arr) else np.zeros(0, bool)
    if not bad.any():
        return Screened(documents, chunks, references, vectors, {})
    chunk_docs = chunks.column("doc_id").to_pylist()
    chunk_ids = chunks.column("chunk_id").to_pylist()
    named: dict[str, list[str]] = {}
    for i in np.flatnonzero(bad):
        named.setdefault(chunk_docs[i], []).append(chunk_ids[i])
    keep = np.array([d not in named for d in chunk_docs], dtype=bool)
    left_out = pa.array(list(named))
    return Screened(
        documents=documents.filter(pc.invert(pc.is_in(documents.column("doc_id"), left_out))),
        chunks=chunks.filter(pa.array(keep)),
        references=references.filter(pc.invert(pc.is_in(references.column("doc_id"), left_out))),
        vectors=arr[keep],
        rejected={d: _reject(origins.get(d), d, ids) for d, ids in named.items()},
    )


def _reject(origin: Document | None, doc_id: str, chunk_ids: list[str]) -> Reject:
    reason = _reason(chunk_ids)
    return reject_of(origin, reason) if origin else Reject(doc_id, None, reason)


def _reason(chunk_ids: list[str]) -> str:
    shown = ", ".join(chunk_ids[:SHOWN_CHUNKS]) + (" ..." if len(chunk_ids) > SHOWN_CHUNKS else "")
    return (
        f"{len(chunk_ids)} chunk(s) embed to an all-zero or non-finite vector, which vector "
        f"search cannot rank ({shown}); the document is not indexed"
    )
