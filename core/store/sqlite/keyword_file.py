"""The saved keyword postings of an index (`<index>.sqlite-keywords`), compact on disk.

Saved as they are in memory (int32 row and uint16 count per posting), the postings of a
1M-chunk index took 0.9 GB beside its 3.3 GB file (bench/README.md, *Index size*). On disk each
term's rows are stored as the differences between neighbours, which are small for the
common terms that hold most postings, and every array is split into byte planes (all
lowest bytes, then all second bytes, ...) so that the mostly-zero high bytes compress to
almost nothing: zstd then takes ~1 byte per posting instead of 6 (90 → 14 MB at 100k
synthetic chunks). Arrays are compressed in blocks so that loading never holds more than
one block's temporaries beside the result.

A file is a NumPy `.npz` (an uncompressed zip of named arrays), written atomically and
tagged with the (instance id, generation) it describes: anything else (absent, stale, of an
older layout, unreadable) loads as None, which only means building the postings again.
"""

from __future__ import annotations

import os
import threading
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import zstandard

LAYOUT = 2  # 1: rows and counts as plain arrays
BLOCK = 1 << 22  # values per compressed block
LEVEL = 1  # higher levels gain ~2 % here for twice the time


def save_arrays(path: Path, key: tuple[str, str], arrays: dict[str, np.ndarray]) -> None:
    """Write `arrays` to `path` atomically (a temporary file renamed over it), tagged with
    `key`. `rows` (int32, ascending within each term) and `counts` (uint16) are packed."""
    packed: dict[str, np.ndarray] = {}
    for name, values in arrays.items():
        if name == "rows":
            # Differences modulo 2**32 across the whole array, term boundaries included:
            # a running sum modulo 2**32 gives the rows back exactly, in one pass.
            deltas = np.diff(values.view(np.uint32), prepend=np.uint32(0))
            packed["rows_z"], packed["rows_ends"] = _pack(deltas)
        elif name == "counts":
            packed["counts_z"], packed["counts_ends"] = _pack(values)
        else:
            packed[name] = values
    tmp = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        with open(tmp, "wb") as out:
            packed["key"], packed["layout"] = np.array(list(key)), np.array([LAYOUT])
            np.savez(out, allow_pickle=False, **packed)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def load_arrays(path: Path, key: tuple[str, str]) -> dict[str, np.ndarray] | None:
    """The arrays saved for exactly `key`, `rows` and `counts` unpacked; None when the file
    is absent, stale, of another layout or unreadable."""
    try:
        with np.load(path, allow_pickle=False) as saved:
            if "layout" not in saved.files or int(saved["layout"][0]) != LAYOUT:
                return None
            if saved["key"].tolist() != list(key):
                return None
            out: dict[str, Any] = {}
            for name in saved.files:
                if name in ("key", "layout", "rows_ends", "counts_ends"):
                    continue
                if name == "rows_z":
                    deltas = _unpack(saved["rows_z"], saved["rows_ends"], np.dtype(np.uint32))
                    out["rows"] = _running_sum(deltas).view(np.int32)
                elif name == "counts_z":
                    out["counts"] = _unpack(
                        saved["counts_z"], saved["counts_ends"], np.dtype(np.uint16)
                    )
                else:
                    out[name] = saved[name]
            return out
    except (OSError, ValueError, KeyError, zipfile.BadZipFile, zstandard.ZstdError):
        return None


def _pack(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Byte planes of `values`, zstd-compressed per block: (frames, end offset of each)."""
    compressor = zstandard.ZstdCompressor(level=LEVEL, write_checksum=True)
    frames, ends, size = [], [], 0
    for low in range(0, len(values), BLOCK):
        block = np.ascontiguousarray(values[low : low + BLOCK])
        planes = block.view(np.uint8).reshape(-1, block.itemsize).T
        frame = compressor.compress(np.ascontiguousarray(planes).tobytes())
        frames.append(frame)
        size += len(frame)
        ends.append(size)
    data = np.frombuffer(b"".join(frames), dtype=np.uint8)
    return data, np.array(ends, dtype=np.int64)


def _unpack(data: np.ndarray, ends: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """The values `_pack` packed, written block by block into one array."""
    decompressor = zstandard.ZstdDecompressor()
    frames = np.split(data, ends[:-1]) if len(ends) else []
    sizes = [zstandard.frame_content_size(f[:32].tobytes()) // dtype.itemsize for f in frames]
    out = np.empty(sum(sizes), dtype=dtype)
    low = 0
    for frame, size in zip(frames, sizes, strict=True):
        planes = np.frombuffer(decompressor.decompress(frame.tobytes()), dtype=np.uint8)
        planes = planes.reshape(dtype.itemsize, size)
        # Each plane written into its byte column of the result: measured 3-4x faster
        # than copying out a transposed view.
        columns = out[low : low + size].view(np.uint8).reshape(size, dtype.itemsize)
        for byte in range(dtype.itemsize):
            columns[:, byte] = planes[byte]
        low += size
    return out


def _running_sum(deltas: np.ndarray) -> np.ndarray:
    """Cumulative sum modulo 2**32, in place."""
    np.cumsum(deltas, dtype=np.uint32, out=deltas)
    return deltas
