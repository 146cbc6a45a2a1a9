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
