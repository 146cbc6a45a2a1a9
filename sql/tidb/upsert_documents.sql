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
