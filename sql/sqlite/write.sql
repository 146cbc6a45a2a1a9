-- The write path: documents, their chunks and search structures, freshness stamps.

-- name: upsert_document!
INSERT INTO documents (
    doc_id, source_path, content_hash, mtime, indexed_at, last_verified, metadata
) VALUES (
    :doc_id, :source_path, :content_hash, :mtime, :indexed_at, :last_verified, :metadata
)
ON CONFLICT (doc_id) DO UPDATE SET
    source_path = excluded.source_path,
    content_hash = excluded.content_hash,
    mtime = excluded.mtime,
    indexed_at = excluded.indexed_at,
    last_verified = excluded.last_verified,
    metadata = excluded.metadata;

-- name: insert_chunk!
-- Positional parameters: the chunk's rowid, then every CHUNK_SCHEMA column in its order, then
-- the text_key of its content (core/store/text_key.py).
INSERT INTO chunks (
    id, chunk_id, doc_id, chunk_index, content, context, chunk_type, language, source,
    domain, token_count, content_hash, path, title, url, symbol, kind, start_line, end_line,
    ios_version_min, ios_version_max, ios_version_min_int, ios_version_max_int,
    swift_version, swift_version_int, deprecated, deprecated_in, deprecated_in_int,
    platforms, framework_tags, imports, attributes, last_verified, metadata, text_key
) VALUES (
    ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
    ?, ?, ?, ?
);

-- name: insert_fts!
INSERT INTO chunks_fts (rowid, body) VALUES (?, ?);

-- name: insert_vector!
INSERT INTO vectors (chunk_id, embedding) VALUES (?, ?);

-- name: stamp_document_mtime!
-- A document's source file was read completely and every record of it is in the index.
UPDATE documents SET mtime = :mtime WHERE doc_id = :doc_id;

-- name: delete_documents!
DELETE FROM documents WHERE doc_id IN (SELECT value FROM json_each(:doc_ids));

-- name: delete_chunks_of_docs!
DELETE FROM chunks WHERE doc_id IN (SELECT value FROM json_each(:doc_ids));

-- name: fts_rows_of_docs
-- The full-text rows of the documents, with the fields their analysed text was made of: the
-- table keeps no copy of it, and FTS5 deletes a row of such a table given the text indexed.
SELECT id, context, content FROM chunks
WHERE doc_id IN (SELECT value FROM json_each(:doc_ids));

-- name: delete_fts_row!
INSERT INTO chunks_fts (chunks_fts, rowid, body) VALUES ('delete', ?, ?);

-- name: fts_delete_all!
INSERT INTO chunks_fts (chunks_fts) VALUES ('delete-all');

-- name: fts_all_rows
SELECT id, context, content FROM chunks ORDER BY id;

-- name: meta_set_fts_analyzer!
UPDATE meta SET fts_analyzer = :version WHERE id = 1;

-- name: delete_vectors_of_docs!
DELETE FROM vectors
WHERE chunk_id IN (
    SELECT chunk_id FROM chunks WHERE doc_id IN (SELECT value FROM json_each(:doc_ids))
);

-- name: mark_verified_documents!
UPDATE documents SET last_verified = :when
WHERE doc_id IN (SELECT value FROM json_each(:doc_ids));

-- name: mark_verified_chunks!
UPDATE chunks SET last_verified = :when
WHERE doc_id IN (SELECT value FROM json_each(:doc_ids));

-- name: insert_pending_vector!
-- The vector of a chunk embedded by the vector phase: written only while the chunk holds the
-- text that was embedded (its content_hash covers context and content) and has no vector, so
-- a vector computed before the chunk's document changed or was deleted never lands.
INSERT OR IGNORE INTO vectors (chunk_id, embedding)
SELECT chunk_id, :embedding FROM chunks
WHERE chunk_id = :chunk_id AND content_hash = :content_hash;

-- name: record_shard_done!
-- In the transaction that writes the shard's vectors; `written` adds up over the shard's runs
-- (a retry of a shard that had committed writes none).
INSERT INTO vector_shards (shard_id, state, written, attempts, error, updated_at)
VALUES (:shard_id, 'done', :written, :attempts, NULL, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
ON CONFLICT (shard_id) DO UPDATE SET
    state = 'done', written = vector_shards.written + excluded.written, attempts = excluded.attempts, error = NULL,
    updated_at = excluded.updated_at;

-- name: record_shard_failed!
-- A shard given up on, with its error; never over a shard already done.
INSERT INTO vector_shards (shard_id, state, written, attempts, error, updated_at)
VALUES (:shard_id, 'failed', 0, :attempts, :error, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
ON CONFLICT (shard_id) DO UPDATE SET
    state = 'failed', attempts = excluded.attempts, error = excluded.error,
    updated_at = excluded.updated_at
WHERE vector_shards.state <> 'done';
