-- Plain INSERT, not ON DUPLICATE KEY UPDATE: the batch deleted its documents' chunks first in
-- the same transaction, so a re-run writes the same rows, and a chunk id that belongs to
-- another document fails the batch (as in the embedded store) instead of silently moving.
-- PyMySQL's executemany turns this into multi-row statements of at most ~1 MB.
INSERT INTO {chunks} (
    chunk_id, doc_id, chunk_index, content, context, chunk_type, language, source, domain,
    token_count, content_hash, path, title, url, symbol, kind, start_line, end_line,
    ios_version_min, ios_version_max, ios_version_min_int, ios_version_max_int,
    swift_version, swift_version_int, deprecated, deprecated_in, deprecated_in_int,
    platforms, framework_tags, imports, attributes, last_verified, metadata,
    body_len, body, embedding
) VALUES (
    %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s,
    %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s
);
