-- Bounded keyword-leg reads (issue 30, item 6). Every statement is idempotent, so a migration
-- interrupted half-way is run again; an index loaded before it is upgraded in place.

-- Each posting's impact: its BM25 term-frequency part, tf * (k1 + 1) / (tf + k1 * (1 - b +
-- b * doc_len / avgdl)), with k1 1.2, b 0.75 (core/store/tidb/bm25.py) and avgdl fixed at 256
-- analysed tokens. The real avgdl moves with the corpus, and the order of two postings of one
-- term can depend on it, so this is an ordering, not the score: it decides which postings of a
-- term beyond the per-term bound are not read. Virtual: no loader writes it, existing rows
-- have it at once, and neither TiDB nor MariaDB can ADD a stored generated column everywhere.
ALTER TABLE {postings} ADD COLUMN IF NOT EXISTS
    impact DOUBLE AS (tf * 2.2e0 / (tf + 1.2e0 * (0.25e0 + 0.75e0 * doc_len / 256e0))) VIRTUAL;

-- A query term reads its highest-impact postings first: a range of this index scanned
-- backwards, stopped by LIMIT. It holds every column the scoring needs, so no row lookup.
CREATE INDEX IF NOT EXISTS term_impact_idx ON {postings} (term, impact, chunk_id, tf, doc_len);

-- Document frequency per term for idf, so that a term's df needs no count of all its postings.
-- Split into shards (a loader adds to the shard of its first document, core/store/tidb/bm25.py):
-- one row per term would make every pair of loaders wait on the rows of common terms.
-- df of a term = SUM(df) over its shards; a shard alone may go negative after deletions.
CREATE TABLE IF NOT EXISTS {term_df} (
    term  VARCHAR(128) NOT NULL,
    shard SMALLINT NOT NULL,
    df    BIGINT NOT NULL,
    PRIMARY KEY (term, shard) /*T![clustered_index] CLUSTERED */
) DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- The postings loaded before this migration, counted into shard 0 as what the other shards do
-- not already count: the same result when run again.
INSERT INTO {term_df} (term, shard, df)
SELECT p.term, 0, p.n - COALESCE(o.n, 0)
FROM (SELECT term, COUNT(*) AS n FROM {postings} GROUP BY term) AS p
LEFT JOIN (
    SELECT term, SUM(df) AS n FROM {term_df} WHERE shard <> 0 GROUP BY term
) AS o ON o.term = p.term
ON DUPLICATE KEY UPDATE df = VALUES(df);
