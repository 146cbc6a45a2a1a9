-- One row per named index of the database; its tables are named after it.
CREATE TABLE IF NOT EXISTS rag_indexes (
    name       VARCHAR(64) NOT NULL PRIMARY KEY,
    created_at VARCHAR(32) NOT NULL
) DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
