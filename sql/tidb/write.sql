-- The write path: documents, their chunks and search structures, freshness stamps.

-- name: upsert_documents!
-- VALUES(col) rather than the MySQL 8.0.19 row alias, which TiDB does not document.
INSERT INTO {documents} (
    doc_id, source_path, content_hash, mtime, indexed_at, last_verified, metadata
) VALUES (%s, %s, %s, %s, %s, %s, %s)
ON DUPLICATE KEY UPDATE
    source_path = VALUES(source_path),
    content_hash = VALUES(content_hash),
    mtime = VALUES(mtime),
    indexed_at = VALUES(indexed_at),
    last_verified = VALUES(last_verified),
    metadata = VALUES(metadata);

-- name: insert_chunks!
-- Plain INSERT, not ON DUPLICATE KEY UPDATE: the batch deleted its documents' chunks first in
-- the same transaction, so a re-run writes the same rows, and a chunk id that belongs to
-- another document fails the batch (as in the embedded store) instead of silently moving.
-- PyMySQL's executemany turns this into multi-row statements of at most ~1 MB.
INSERT INTO {chunks} (
    chunk_id, doc_id, chunk_index, content, context, chunk_type, language, source, domain,
    token_count, content_hash, path, title, url, symbol, kind, start_line, end_line,
    ios_version_min, ios_version_max, ios_version_min_int, ios_version_max_int,
    swift_version, swift_version_int, deprecated, deprecated_in, deprecated_in_int,
    platforms, framework_tags, imports, attributes, last_verified, metadata, text_key,
    body_len, body, embedding
) VALUES (
    %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s,
    %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s
);

-- name: insert_postings!
INSERT INTO {postings} (term, chunk_id, doc_id, tf, doc_len) VALUES (%s, %s, %s, %s, %s);

-- name: load_chunks!
-- The TSV is written by index.tidb_load with '\N' for NULL and MySQL's backslash escapes.
-- With LOCAL the server skips duplicate keys instead of failing; the loader compares the
-- affected row count with the rows it sent.
LOAD DATA LOCAL INFILE %(path)s INTO TABLE {chunks}
CHARACTER SET utf8mb4
FIELDS TERMINATED BY '\t' ESCAPED BY '\\'
LINES TERMINATED BY '\n'
(
    chunk_id, doc_id, chunk_index, content, context, chunk_type, language, source, domain,
    token_count, content_hash, path, title, url, symbol, kind, start_line, end_line,
    ios_version_min, ios_version_max, ios_version_min_int, ios_version_max_int,
    swift_version, swift_version_int, deprecated, deprecated_in, deprecated_in_int,
    platforms, framework_tags, imports, attributes, last_verified, metadata, text_key,
    body_len, body, embedding
);

-- name: load_postings!
LOAD DATA LOCAL INFILE %(path)s INTO TABLE {postings}
CHARACTER SET utf8mb4
FIELDS TERMINATED BY '\t' ESCAPED BY '\\'
LINES TERMINATED BY '\n'
(term, chunk_id, doc_id, tf, doc_len);

-- name: postings_terms_of_docs
-- How many postings of each term the documents a batch replaces hold: subtracted from
-- term_df with the batch's own. The documents' rows are locked already (upsert_documents),
-- so no other loader changes these postings meanwhile.
SELECT term, COUNT(*) FROM {postings} WHERE doc_id IN ({doc_ids}) GROUP BY term;

-- name: term_df_add!
-- A batch's net change of each term's document frequency, in one shard, in term order: loaders
-- lock these rows in one order, and loaders with other shards do not wait for each other.
INSERT INTO {term_df} (term, shard, df) VALUES (%s, %s, %s)
ON DUPLICATE KEY UPDATE df = df + VALUES(df);

-- name: stamp_document_mtime!
-- A document's source file was read completely and every record of it is in the index.
UPDATE {documents} SET mtime = %(mtime)s WHERE doc_id = %(doc_id)s;

-- name: delete_documents!
DELETE FROM {documents} WHERE doc_id IN ({doc_ids});

-- name: delete_chunks_of_docs!
DELETE FROM {chunks} WHERE doc_id IN ({doc_ids});

-- name: delete_postings_of_docs!
DELETE FROM {postings} WHERE doc_id IN ({doc_ids});

-- name: mark_verified_documents!
UPDATE {documents} SET last_verified = %(when)s WHERE doc_id IN ({doc_ids});

-- name: mark_verified_chunks!
UPDATE {chunks} SET last_verified = %(when)s WHERE doc_id IN ({doc_ids});
