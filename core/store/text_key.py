"""What makes two chunks the same passage for the query side, and its stored fingerprint.

The query side shows a passage once however many indexes or documents hold it: two chunks are
the same when their contents are equal once whitespace runs are collapsed and case is folded
(`normalised_text`). Comparing contents needs every candidate's text, which a query would
otherwise fetch and decompress for ~100 candidates only to show ten. So every store keeps,
beside each chunk, `text_key`: a 64-bit fingerprint of its normalised content, written with the
chunk. Fusion reads the keys; only chunks whose keys meet are compared by their texts, so a
fingerprint collision can never merge two different passages.

A change to `normalised_text` changes what the stored keys mean: it needs a migration that
recomputes them (SQLite's `backfill_text_keys` does, for rows without a key).
"""

from __future__ import annotations

import hashlib


def normalised_text(text: str | None) -> str:
    # str.split() collapses the same whitespace as the regex \s+ did, ~3.5x faster.
    return " ".join((text or "").split()).lower()


def text_key(content: str | None) -> int:
    """The fingerprint of `content` once normalised: a signed 64-bit integer, as both
    dialects store one (INTEGER, BIGINT)."""
    digest = hashlib.blake2b(normalised_text(content).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little", signed=True)


# The key of a chunk with no words: such chunks are never deduplicated against each other.
EMPTY_TEXT_KEY = text_key("")
