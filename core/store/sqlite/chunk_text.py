"""Chunk text at rest: zstd frames with a dictionary trained on the index's own chunks.

The text was 1.5 KB of a 1M-chunk index's ~3.3 KB per chunk, the largest part of the file
(bench/README.md, *Index size*). Chunks are short, so a general-purpose compressor finds little to
reuse inside one (zstd alone: ~2.3x on the synthetic 200-word chunks, ~2x on Swift docs);
a dictionary trained on a sample of the index's chunks gives it their shared vocabulary
(~3x and ~2.6x), and compressing or decompressing a chunk then takes a few microseconds
(zlib: ~60 µs to compress, more than the whole per-chunk budget of a load).

A stored `content` is either TEXT (rows written before this module, or too short to
shrink) or a BLOB holding one zstd frame. A frame names its dictionary by zstd's own
dictionary id (0: none); the dictionaries live in the `text_dictionaries` table of the same
file, written in the transaction of the first rows that use them, so no row can outlive or
precede its dictionary. An index trains one dictionary, from the first batch with enough
text; the batches before it are compressed without one.
"""

from __future__ import annotations

import secrets
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from typing import Any

import zstandard

from core.store.contract import StoreError
from core.store.sqlite.schema import q

LEVEL = 3
DICTIONARY_BYTES = 32 * 1024
# zstd's trainer wants samples of ~100x the dictionary's size; below this much text a
# dictionary would be fitted to too few chunks to help the ones after them.
TRAIN_MIN_BYTES = 1 << 20
# Measured on three corpora (train on 6,000 chunks, compress the next 6,000): 1,000 samples
# compress within 1 % of 4,000 and train in a sixth of the time (~0.1 s against 0.4-0.8 s).
TRAIN_MAX_SAMPLES = 1000
# A frame's header and checksum-free trailer cost ~6 bytes: shorter texts stay TEXT.
MIN_BYTES = 64


class ChunkText:
    """Encodes and decodes the `content` column of one index file. Dictionaries are read
    from the file when first needed and kept (once written, one is never changed); zstd's
    compressor and decompressor objects are not thread-safe, so each thread makes its own."""

    def __init__(self, path: str) -> None:
        self._path = path
        self._lock = threading.Lock()
        self._dictionaries: dict[int, bytes] = {}
        self._local = threading.local()

    # -- writing -------------------------------------------------------------------------

    def encode(self, conn: sqlite3.Connection, texts: Sequence[str]) -> list[str | bytes]:
        """The stored form of each text, inside the caller's write transaction on `conn`:
        trains and stores the index's dictionary first when it has none and `texts` are
        enough to train it."""
        # Asked of the file, not of this object: a dictionary trained in a transaction that
        # was rolled back is not in it, and rows compressed with it could not be read.
        newest = conn.execute(q("text_dictionary_newest")).fetchone()
        dict_id = newest[0] if newest is not None else self._train(conn, texts)
        compressor = self._coders("compressors", dict_id, conn)
        out: list[str | bytes] = []
        for text in texts:
            raw = text.encode()
            if len(raw) < MIN_BYTES:
                out.append(text)
                continue
            frame = compressor.compress(raw)
            out.append(frame if len(frame) < len(raw) else text)
        return out

    def _train(self, conn: sqlite3.Connection, texts: Sequence[str]) -> int:
        """Train and store a dictionary from `texts`; its id, or 0 (none) when they are too
        few."""
        samples: list[bytes | bytearray | memoryview] = [
            t.encode() for t in texts[:: max(1, len(texts) // TRAIN_MAX_SAMPLES)]
        ]
        if sum(map(len, samples)) < TRAIN_MIN_BYTES:
            return 0
        try:
            # A random id, not zstd's own (a hash of what it trained on): a dictionary
            # trained again after a rolled-back write must not share the id of the one this
            # object may still hold.
            trained = zstandard.train_dictionary(
                DICTIONARY_BYTES, samples, level=LEVEL, dict_id=secrets.randbelow(1 << 30) + 32768
            )
        except zstandard.ZstdError:  # e.g. texts too alike to build one from: go without
            return 0
        dict_id, data = trained.dict_id(), trained.as_bytes()
        conn.execute(q("text_dictionary_add"), {"dict_id": dict_id, "data": data})
        with self._lock:
            self._dictionaries[dict_id] = data
        return int(dict_id)

    # -- reading -------------------------------------------------------------------------

    def decode(self, conn: sqlite3.Connection, value: str | bytes | None) -> str | None:
        """A stored `content` as text. `conn` is only read when the frame names a dictionary
        this object has not read yet."""
        if value is None or isinstance(value, str):
            return value
        try:
            dict_id = zstandard.get_frame_parameters(value).dict_id
            return str(self._coders("decompressors", dict_id, conn).decompress(value), "utf-8")
        except zstandard.ZstdError as exc:
            raise StoreError(
                f"index {self._path}: a chunk's stored text cannot be decompressed ({exc}); "
                "the file is damaged: move it aside and ingest again to rebuild"
            ) from exc

    def decode_all(
        self, conn: sqlite3.Connection, values: Iterable[str | bytes | None]
    ) -> list[str | None]:
        return [self.decode(conn, v) for v in values]

    def _coders(self, kind: str, dict_id: int, conn: sqlite3.Connection) -> Any:
        """This thread's compressor or decompressor for frames of dictionary `dict_id`."""
        coders: dict[int, Any] = self._local.__dict__.setdefault(kind, {})
        coder = coders.get(dict_id)
        if coder is None:
            dictionary = self._dictionary(dict_id, conn) if dict_id else None
            if kind == "compressors":
                coder = zstandard.ZstdCompressor(
                    level=LEVEL,
                    dict_data=dictionary,
                    write_checksum=False,
                    write_content_size=True,
                    write_dict_id=True,
                )
            else:
                coder = zstandard.ZstdDecompressor(dict_data=dictionary)
            coders[dict_id] = coder
        return coder

    def _dictionary(self, dict_id: int, conn: sqlite3.Connection) -> zstandard.ZstdCompressionDict:
        with self._lock:
            data = self._dictionaries.get(dict_id)
        if data is None:
            rows = dict(conn.execute(q("text_dictionaries")).fetchall())
            with self._lock:
                self._dictionaries.update(rows)
            data = rows.get(dict_id)
        if data is None:
            raise StoreError(
                f"index {self._path}: a chunk's text was compressed with dictionary {dict_id}, "
                "which the file does not hold; the file is damaged: move it aside and ingest "
                "again to rebuild"
            )
        return zstandard.ZstdCompressionDict(data)
