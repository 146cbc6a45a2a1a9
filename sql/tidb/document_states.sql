SELECT doc_id, content_hash, mtime, source_path, last_verified FROM {documents};
