-- What the server offers an index: the vector column and HNSW index, TiFlash, native full-text search.

-- name: add_embedding_column!
-- {vector_type} is VECTOR(D) on TiDB (D from the bound model) and LONGTEXT on MariaDB,
-- where the vector's '[...]' text is read as JSON by the VEC_COSINE_DISTANCE stand-in.
ALTER TABLE {chunks} ADD COLUMN IF NOT EXISTS embedding {vector_type};

-- name: embedding_column_exists
SELECT COUNT(*) FROM INFORMATION_SCHEMA.COLUMNS
WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = %(table)s AND COLUMN_NAME = 'embedding';

-- name: tiflash_replica!
-- An HNSW index lives on TiFlash; ADD VECTOR INDEX needs the replica first. Fails with
-- "tiflash replica count ... total tiflash server count: 0" when there is no TiFlash.
ALTER TABLE {chunks} SET TIFLASH REPLICA 1;

-- name: vector_index!
-- The documented HNSW index form: double parentheses around the distance expression, only
-- on a fixed-dimension VECTOR(D) column. Only used for ORDER BY VEC_COSINE_DISTANCE(...) LIMIT
-- k with no WHERE in the same query block (see vector_ann_candidates.sql).
ALTER TABLE {chunks} ADD VECTOR INDEX embedding_hnsw ((VEC_COSINE_DISTANCE(embedding))) USING HNSW;

-- name: index_exists
-- Whether the index `name` exists on the table: creating the HNSW and full-text indexes is
-- resumed after a crash, and neither ADD form takes IF NOT EXISTS in TiDB's documentation.
SELECT COUNT(*) FROM INFORMATION_SCHEMA.STATISTICS
WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = %(table)s AND INDEX_NAME = %(index)s;

-- name: compact_tiflash!
-- Rows in TiFlash's delta layer are not in the HNSW index until compaction
-- (ai/vector-search-index); the statement returns when every replica is compacted.
ALTER TABLE {chunks} COMPACT TIFLASH REPLICA;

-- name: tiflash_index_progress
-- HNSW build progress; done when rows_stable_not_indexed = 0 (the delta layer is never
-- indexed until compaction).
SELECT INDEX_NAME, INDEX_KIND, ROWS_STABLE_INDEXED, ROWS_STABLE_NOT_INDEXED,
       ROWS_DELTA_INDEXED, ROWS_DELTA_NOT_INDEXED, ERROR_MESSAGE
FROM INFORMATION_SCHEMA.TIFLASH_INDEXES
WHERE TIDB_DATABASE = DATABASE() AND TIDB_TABLE = %(table)s;

-- name: fts_probe_create!
-- Native full-text search probe (TiDB Cloud Starter only, in some AWS regions). Self-managed TiDB
-- accepts this DDL, creates no index and warns 1214.
CREATE TABLE IF NOT EXISTS rag_fts_probe (
    id BIGINT PRIMARY KEY,
    t  TEXT,
    FULLTEXT INDEX ft_t (t) WITH PARSER STANDARD
);

-- name: fts_probe_match
SELECT id FROM rag_fts_probe WHERE fts_match_word('probe', t) LIMIT 1;

-- name: fts_probe_index_exists
SELECT COUNT(*) FROM INFORMATION_SCHEMA.STATISTICS
WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'rag_fts_probe' AND INDEX_TYPE = 'FULLTEXT';

-- name: fts_probe_drop#
-- The full-text index must go before the table can be dropped.
ALTER TABLE rag_fts_probe DROP INDEX ft_t;
DROP TABLE IF EXISTS rag_fts_probe;

-- name: fts_add_index!
-- Native BM25 over the analysed text (the loader fills `body` in this mode).
ALTER TABLE {chunks} ADD FULLTEXT INDEX body_fts (body) WITH PARSER STANDARD;
