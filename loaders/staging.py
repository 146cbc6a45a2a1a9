"""The chunks of an ingest run, kept on disk until they are loaded, so a failed run resumes
where it stopped.

One staging folder per index: the documents being processed, their chunks and references
(Parquet). A later run reuses the staged chunks of every document whose content hash still
matches, so a crash while loading never chunks a document twice (chunking a transcript
embeds its sentence windows). The folder is removed when the lexical phase's load completes;
vectors are never staged: the index itself keeps which chunks still need one
(loaders/vectors.py).
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from core.store.contract import CHUNK_SCHEMA, DOCUMENT_SCHEMA, REFERENCE_SCHEMA


@dataclass
class Staged:
    documents: pa.Table
    chunks: pa.Table
    references: pa.Table  # REFERENCE_SCHEMA rows of the chunks


class Staging:
    def __init__(self, root: Path, index: str, fingerprint: dict) -> None:
        self.dir = root / index
        self.fingerprint = fingerprint

    @property
    def _meta(self) -> Path:
        return self.dir / "stage.json"

    def load(self) -> Staged | None:
        """What a previous run of the same configuration left, or None."""
        try:
            if json.loads(self._meta.read_text()) != self.fingerprint:
                return None
            documents = pq.read_table(self.dir / "documents.parquet", schema=DOCUMENT_SCHEMA)
            chunks = pq.read_table(self.dir / "chunks.parquet", schema=CHUNK_SCHEMA)
            refs = pq.read_table(self.dir / "references.parquet", schema=REFERENCE_SCHEMA)
        except (OSError, ValueError, pa.ArrowException):
            return None
        return Staged(documents, chunks, refs)

    def save_chunks(self, documents: pa.Table, chunks: pa.Table, references: pa.Table) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        _write_atomic(self.dir / "documents.parquet", lambda p: pq.write_table(documents, p))
        _write_atomic(self.dir / "chunks.parquet", lambda p: pq.write_table(chunks, p))
        _write_atomic(self.dir / "references.parquet", lambda p: pq.write_table(references, p))
        _write_atomic(self._meta, lambda p: p.write_text(json.dumps(self.fingerprint)))

    def clear(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


def reusable(staged: Staged | None, wanted: dict[str, str]) -> Staged | None:
    """The staged rows of documents whose content hash is still `wanted[doc_id]`."""
    if staged is None or len(staged.documents) == 0:
        return None
    ids = staged.documents.column("doc_id").to_pylist()
    hashes = staged.documents.column("content_hash").to_pylist()
    keep = [doc for doc, h in zip(ids, hashes, strict=True) if wanted.get(doc) == h]
    if not keep:
        return None
    keep_set = pa.array(keep, pa.string())
    doc_mask = pc.is_in(staged.documents.column("doc_id"), value_set=keep_set)
    chunk_mask = pc.is_in(staged.chunks.column("doc_id"), value_set=keep_set)
    positions = np.flatnonzero(chunk_mask.to_numpy(zero_copy_only=False))
    return Staged(
        staged.documents.filter(doc_mask),
        staged.chunks.take(pa.array(positions, pa.int64())),
        staged.references.filter(pc.is_in(staged.references.column("doc_id"), value_set=keep_set)),
    )


def _write_atomic(path: Path, write) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    write(tmp)
    tmp.replace(path)
