-- Initial schema of an embedded index. One file per named index.

-- Exactly one row. `generation` is bumped by every write so that readers (in this or any
-- other process) know when their in-memory vector matrix is stale; `instance_id` tells a
-- recreated file apart from the one it replaced.
CREATE TABLE meta (
    id          INTEGER PRIMARY KEY CHECK (id = 1),
    model_id    TEXT,
    dim         INTEGER,
    created_at  TEXT NOT NULL,
    instance_id TEXT NOT NULL,
    generation  INTEGER NOT NULL DEFAULT 0
);

INSERT INTO meta (id, created_at, instance_id)
VALUES (1, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'), lower(hex(randomblob(16))));

CREATE TABLE documents (
    doc_id        TEXT PRIMARY KEY,
    source_path   TEXT,
    content_hash  TEXT NOT NULL,
    mtime         REAL,
    indexed_at    TEXT NOT NULL,
    last_verified TEXT,
    metadata      TEXT  -- JSON
);

-- Every CHUNK_SCHEMA column. Lists and dicts are JSON text; versions also as sortable ints.
CREATE TABLE chunks (
    id                  INTEGER PRIMARY KEY,  -- rowid of the FTS row
    chunk_id            TEXT NOT NULL UNIQUE,
    doc_id              TEXT NOT NULL,
    chunk_index         INTEGER,
    content             TEXT NOT NULL,
    context             TEXT,
    chunk_type          TEXT,
    language            TEXT,
    source              TEXT,
    domain              TEXT,
    token_count         INTEGER,
    content_hash        TEXT,
    path                TEXT,
    title               TEXT,
    url                 TEXT,
    symbol              TEXT,
    kind                TEXT,
    start_line          INTEGER,
    end_line            INTEGER,
    ios_version_min     TEXT,
    ios_version_max     TEXT,
    ios_version_min_int INTEGER,
    ios_version_max_int INTEGER,
    swift_version       TEXT,
    swift_version_int   INTEGER,
    deprecated          INTEGER NOT NULL DEFAULT 0,
    deprecated_in       TEXT,
    deprecated_in_int   INTEGER,
    platforms           TEXT,  -- JSON object
    framework_tags      TEXT NOT NULL DEFAULT '[]',  -- JSON array
    imports             TEXT NOT NULL DEFAULT '[]',  -- JSON array
    attributes          TEXT NOT NULL DEFAULT '[]',  -- JSON array
    last_verified       TEXT,
    metadata            TEXT  -- JSON object
);

CREATE INDEX chunks_doc_id ON chunks (doc_id);
CREATE INDEX chunks_domain ON chunks (domain);
CREATE INDEX chunks_source ON chunks (source);

-- L2-normalised float32, little-endian, `dim` values.
CREATE TABLE vectors (
    chunk_id  TEXT PRIMARY KEY,
    embedding BLOB NOT NULL
);

-- Holds the analysed text (index.analyzer) of context + content, space-separated, so the
-- tokenizer only splits on spaces; `_` must stay inside tokens (snake_case identifiers).
-- rowid = chunks.id.
CREATE VIRTUAL TABLE chunks_fts USING fts5 (
    body,
    tokenize = "unicode61 remove_diacritics 0 tokenchars '_'"
);
