"""Shards: an index's pending chunks cut into pieces of work a pool of workers embeds.

When the vector phase runs on more than this process (loaders/executors/), its work is the
index's pending chunks, deduplicated by content key (the embedding cache's key: the model's
identity and the text it embeds, core/embedding/cache.py), so a text repeated across
chunks is embedded once; cut into shards of about `vector_shard_tokens` tokens, so an ingest
makes hundreds of task runs at most, never one per chunk, and each is about a minute of a
worker's time.

A shard's id is a hash of the model identity and its sorted content keys: planned again
(a resumed run, a retry) over the same texts, a shard keeps its id, which is what the index's
shard ledger (`put_vectors(shard=)`, `shard_states`) records. A shard travels as two Parquet
files in the spool folder, never as an argument: `<id>.texts.parquet` (key, text: what a
worker embeds) and `<id>.chunks.parquet` (chunk id, document, content hash, key: where each
vector goes). Workers get the paths, so a task's argument stays a few hundred bytes
whatever its texts weigh, and workers on other machines read the spool over a shared mount.

Planning holds the pending chunks' ids, hashes and keys in memory (a few hundred bytes per
chunk) and each shard's texts only until its file is written.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from chunkers.embedding_text import embedding_text
from core.embedding.cache import cache_key
from core.store.contract import IndexStore, PendingChunk

TEXTS_SCHEMA = pa.schema([("key", pa.string()), ("text", pa.string())])
CHUNKS_SCHEMA = pa.schema(
    [
        ("chunk_id", pa.string()),
        ("doc_id", pa.string()),
        ("content_hash", pa.string()),
        ("key", pa.string()),
    ]
)
# Chunks per shard at most, whatever their tokens: a worker writing to TiDB writes a shard in
# one transaction of one UPDATE per chunk, and TiDB allows 5,000 statements per transaction
# (stmt-count-limit); tiny chunks would otherwise pack past it.
MAX_SHARD_CHUNKS = 4000


@dataclass(frozen=True)
class Shard:
    """One shard: its id, its two files, and what it holds."""

    shard_id: str
    texts_path: str
    chunks_path: str
    texts: int  # distinct texts to embed
    chunks: int  # chunks the vectors go to
    tokens: int


@dataclass(frozen=True)
class ShardChunks:
    """Where a shard's vectors go: row-aligned chunk ids, documents, hashes and keys."""

    chunk_ids: list[str]
    doc_ids: list[str]
    content_hashes: list[str]
    keys: list[str]

    def vectors_for(self, keys: list[str], vectors: np.ndarray) -> np.ndarray:
        """Each chunk's vector, from vectors keyed by content (any order)."""
        row = {key: i for i, key in enumerate(keys)}
        return np.asarray(vectors, dtype=np.float32)[[row[k] for k in self.keys]]


def shard_id(identity: str, keys: list[str]) -> str:
    """sha256 of the model identity and the shard's sorted content keys."""
    digest = hashlib.sha256(identity.encode())
    for key in sorted(keys):
        digest.update(b"\0" + key.encode())
    return digest.hexdigest()


def spool_folder(spool: Path, index: str) -> Path:
    return spool / index


def clear_spool(spool: Path, index: str) -> None:
    """Remove the shard files a killed run of this index left behind."""
    shutil.rmtree(spool_folder(spool, index), ignore_errors=True)


def plan_shards(
    index: IndexStore,
    identity: str,
    spool: Path,
    *,
    shard_tokens: int,
    count_tokens: Callable[[list[str]], list[int]],
    page_chunks: int = 2048,
    max_chunks: int = MAX_SHARD_CHUNKS,
) -> list[Shard]:
    """Cut the index's pending chunks into shards and write their files under
    `spool/<index name>`. A shard closes before the text that would take it past
    `shard_tokens` (a text longer than that makes a shard alone) or past `max_chunks`."""
    folder = spool_folder(spool, index.name)
    folder.mkdir(parents=True, exist_ok=True)
    home: dict[str, int] = {}  # content key -> the shard embedding it
    members: list[list[tuple[str, str, str, str]]] = []  # per shard: chunk, doc, hash, key
    cut: list[tuple[str, int, int]] = []  # per shard written: id, texts, tokens
    texts: dict[str, str] = {}  # the open shard's key -> text
    tokens = 0

    def close() -> None:
        nonlocal texts, tokens
        if texts:
            sid = shard_id(identity, list(texts))
            _write(
                folder / f"{sid}.texts.parquet", TEXTS_SCHEMA, [list(texts), list(texts.values())]
            )
            cut.append((sid, len(texts), tokens))
        texts, tokens = {}, 0

    for page in _pages(index, page_chunks):
        wanted = [embedding_text(p.context, p.content, p.language) for p in page]
        keys = [cache_key(identity, text) for text in wanted]
        counts = dict(zip(keys, count_tokens(wanted), strict=True))
        for chunk, key, text in zip(page, keys, wanted, strict=True):
            # A text already in a shard goes with it, unless that shard is full: then it is
            # embedded again (a duplicate costs one text, an overfull shard a failed write).
            if key not in home or len(members[home[key]]) >= max_chunks:
                full = bool(texts) and len(members[-1]) >= max_chunks
                if texts and (tokens + counts[key] > shard_tokens or full):
                    close()
                if not texts:
                    members.append([])
                if key not in texts:
                    texts[key], tokens = text, tokens + counts[key]
                home[key] = len(members) - 1
            members[home[key]].append((chunk.chunk_id, chunk.doc_id, chunk.content_hash, key))
    close()
    shards = []
    for (sid, n_texts, n_tokens), rows in zip(cut, members, strict=True):
        chunks_path = folder / f"{sid}.chunks.parquet"
        _write(chunks_path, CHUNKS_SCHEMA, [list(column) for column in zip(*rows, strict=True)])
        shards.append(
            Shard(
                sid,
                str(folder / f"{sid}.texts.parquet"),
                str(chunks_path),
                n_texts,
                len(rows),
                n_tokens,
            )
        )
    return shards


def read_texts(shard: Shard) -> tuple[list[str], list[str]]:
    """(keys, texts) of a shard: what a worker embeds."""
    table = pq.read_table(shard.texts_path)
    return table.column("key").to_pylist(), table.column("text").to_pylist()


def read_chunks(shard: Shard) -> ShardChunks:
    table = pq.read_table(shard.chunks_path)
    return ShardChunks(*(table.column(name).to_pylist() for name in CHUNKS_SCHEMA.names))


def remove_files(shard: Shard) -> None:
    """A shard's files, once its vectors are in the index or it is given up on."""
    for path in (shard.texts_path, shard.chunks_path):
        Path(path).unlink(missing_ok=True)


def _pages(index: IndexStore, page_chunks: int) -> Iterator[list[PendingChunk]]:
    after = ""
    while page := index.pending_vectors(after, page_chunks):
        yield page
        after = page[-1].chunk_id


def _write(path: Path, schema: pa.Schema, columns: list[list[str]]) -> None:
    """Written whole or not at all: a worker never reads half a file."""
    table = pa.table(columns or [[] for _ in schema.names], schema=schema)
    partial = path.with_name(path.name + ".partial")
    pq.write_table(table, partial)
    os.replace(partial, path)
