-- Native full-text search probe (TiDB Cloud Starter/Essential only). Self-managed TiDB
-- accepts this DDL, creates no index and warns 1214.
CREATE TABLE IF NOT EXISTS rag_fts_probe (
    id BIGINT PRIMARY KEY,
    t  TEXT,
    FULLTEXT INDEX ft_t (t) WITH PARSER STANDARD
);
