"""BM25 on every TiDB: native full-text search where the server really has it, otherwise
Okapi BM25 in SQL over a postings table tokenised by the embedded index's analyzer.

Native full-text search exists only on TiDB Cloud Starter (some AWS regions); self-managed
TiDB accepts the FULLTEXT DDL, warns 1214 and creates nothing. So the server is probed once per index
(warning, INFORMATION_SCHEMA.STATISTICS, one fts_match_word query) rather than trusted.
"""

from __future__ import annotations

import logging
import zlib
from collections import Counter
from collections.abc import Iterable
from contextlib import suppress
from dataclasses import dataclass
from typing import Any

from core.store.analyzer import analyze, analyze_query
from core.store.tidb.sql import render, statements

log = logging.getLogger(__name__)

# The postings term column is VARCHAR(128); longer "words" (base64, hashes) are not searchable
# on either side rather than truncated into false matches.
MAX_TERM_CHARS = 128
MAX_QUERY_TERMS = 64
NO_FTS_WARNING = 1214
# Shards of the per-term document frequency table (migration 0005): two loaders wait for each
# other on a common term's row only when their batches start with documents of one shard.
DF_SHARDS = 16


@dataclass(frozen=True)
class ChunkTerms:
    """What one chunk contributes to the BM25 index."""

    doc_len: int  # every analysed token counts toward the length
    tf: dict[str, int]  # searchable terms only


def chunk_terms(context: str | None, content: str | None) -> ChunkTerms:
    tokens = analyze(" ".join(p for p in (context, content) if p))
    counts = Counter(t for t in tokens if len(t) <= MAX_TERM_CHARS)
    return ChunkTerms(doc_len=len(tokens), tf=dict(counts))


def query_terms(text: str) -> list[str]:
    """The analysed, deduplicated query terms that can match a posting."""
    return [t for t in analyze_query(text) if len(t) <= MAX_TERM_CHARS][:MAX_QUERY_TERMS]


def posting_rows(
    chunk_ids: Iterable[str], doc_ids: Iterable[str], terms: Iterable[ChunkTerms]
) -> list[tuple[str, str, str, int, int]]:
    """(term, chunk_id, doc_id, tf, doc_len) rows, in the column order of the postings table."""
    return [
        (term, chunk_id, doc_id, tf, ct.doc_len)
        for chunk_id, doc_id, ct in zip(chunk_ids, doc_ids, terms, strict=True)
        for term, tf in ct.tf.items()
    ]


def df_shard(doc_id: str) -> int:
    """The term_df shard a batch whose first document is `doc_id` adds to. Stable (crc32, not
    Python's salted hash), so a rerun of a batch takes the same locks."""
    return zlib.crc32(doc_id.encode("utf-8")) % DF_SHARDS


def df_changes(
    added: Iterable[tuple[str, str, str, int, int]],
    removed: Iterable[tuple[str, int]],
    shard: int,
) -> list[tuple[str, int, int]]:
    """(term, shard, change) rows for term_df, in term order, leaving out terms whose df does
    not change: `added` are the batch's posting rows (term first), `removed` the (term,
    postings) counts of the documents it replaces or deletes."""
    change: Counter[str] = Counter(row[0] for row in added)
    change.subtract({term: int(n) for term, n in removed})
    return [(term, shard, n) for term, n in sorted(change.items()) if n]


def native_fts_works(conn: Any) -> bool:
    """Whether `fts_match_word` really searches on this server. Any error or the 1214
    warning means no; the probe table is removed either way."""
    cur = conn.cursor()
    try:
        cur.execute(render("fts_probe_create"))
        cur.execute("SHOW WARNINGS")
        if any(row[1] == NO_FTS_WARNING for row in cur.fetchall()):
            return False
        cur.execute(render("fts_probe_index_exists"))
        if not cur.fetchone()[0]:
            return False
        cur.execute(render("fts_probe_match"))
        cur.fetchall()
        return True
    except Exception as exc:  # 1305 unknown function, 1235 unsupported, 8200 ...: no FTS
        log.info("native full-text search unavailable: %s", exc)
        return False
    finally:
        for statement in statements(render("fts_probe_drop")):
            # The index or the table may not exist: then there is nothing to clean.
            with suppress(Exception):
                cur.execute(statement)
        cur.close()
