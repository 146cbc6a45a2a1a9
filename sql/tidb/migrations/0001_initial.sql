-- Initial table set of one named index. DDL commits implicitly on TiDB and MariaDB, so every
-- statement is idempotent (IF NOT EXISTS / IGNORE): a migration interrupted half-way is
-- simply run again.

-- Exactly one row: the model the index was built with, what the server offered when the
-- index was created, and the BM25 corpus statistics, updated in each load's transaction.
CREATE TABLE IF NOT EXISTS {meta} (
    id             TINYINT NOT NULL PRIMARY KEY,
    model_id       VARCHAR(512),
    dim            INT,
    created_at     VARCHAR(32) NOT NULL,
    vector_index   VARCHAR(16) NOT NULL DEFAULT 'exact',
    bm25_mode      VARCHAR(16) NOT NULL DEFAULT 'sql',
    bm25_docs      BIGINT NOT NULL DEFAULT 0,
    bm25_total_len BIGINT NOT NULL DEFAULT 0
) DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

INSERT IGNORE INTO {meta} (id, created_at) VALUES (1, DATE_FORMAT(UTC_TIMESTAMP(), '%Y-%m-%dT%H:%i:%sZ'));

CREATE TABLE IF NOT EXISTS {documents} (
    doc_id        VARCHAR(512) NOT NULL,
    source_path   TEXT,
    content_hash  VARCHAR(128) NOT NULL,
    mtime         DOUBLE,
    indexed_at    VARCHAR(32) NOT NULL,
    last_verified VARCHAR(32),
    metadata      JSON,
    PRIMARY KEY (doc_id) /*T![clustered_index] CLUSTERED */
) DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- Every CHUNK_SCHEMA column. The key is the loader's deterministic chunk id (not AUTO_RANDOM):
-- loading the same document twice writes the same rows. Versions are sortable integers
-- (text would put '17.0' before '9.0'). `embedding` is added by bind_model, once the
-- model's dimension is known.
CREATE TABLE IF NOT EXISTS {chunks} (
    chunk_id            VARCHAR(512) NOT NULL,
    doc_id              VARCHAR(512) NOT NULL,
    chunk_index         INT,
    content             LONGTEXT NOT NULL,
    context             TEXT,
    chunk_type          VARCHAR(64),
    language            VARCHAR(64),
    source              VARCHAR(128),
    domain              VARCHAR(64),
    token_count         INT,
    content_hash        VARCHAR(128),
    path                TEXT,
    title               TEXT,
    url                 TEXT,
    symbol              TEXT,
    kind                VARCHAR(64),
    start_line          INT,
    end_line            INT,
    ios_version_min     VARCHAR(32),
    ios_version_max     VARCHAR(32),
    ios_version_min_int INT,
    ios_version_max_int INT,
    swift_version       VARCHAR(32),
    swift_version_int   INT,
    deprecated          TINYINT(1) NOT NULL DEFAULT 0,
    deprecated_in       VARCHAR(32),
    deprecated_in_int   INT,
    platforms           JSON,
    framework_tags      JSON NOT NULL,
    imports             JSON NOT NULL,
    attributes          JSON NOT NULL,
    last_verified       VARCHAR(32),
    metadata            JSON,
    -- BM25 document length (analysed tokens of context + content) and, only where native
    -- full-text search is used, the analysed text itself.
    body_len            INT NOT NULL DEFAULT 0,
    body                LONGTEXT,
    PRIMARY KEY (chunk_id) /*T![clustered_index] CLUSTERED */,
    KEY doc_id_idx (doc_id),
    KEY domain_idx (domain),
    KEY source_idx (source)
) DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- BM25 postings of the analysed text (index.analyzer), maintained by the loader in the
-- transaction that writes the chunk. Clustered on (term, chunk_id): a query term is one
-- range read. doc_len is copied from the chunk so scoring needs no join.
CREATE TABLE IF NOT EXISTS {postings} (
    term     VARCHAR(128) NOT NULL,
    chunk_id VARCHAR(512) NOT NULL,
    doc_id   VARCHAR(512) NOT NULL,
    tf       INT NOT NULL,
    doc_len  INT NOT NULL,
    PRIMARY KEY (term, chunk_id) /*T![clustered_index] CLUSTERED */,
    KEY doc_id_idx (doc_id)
) DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
