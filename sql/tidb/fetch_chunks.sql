SELECT
    chunk_id, doc_id, chunk_index, content, context, chunk_type, language, source, domain,
    token_count, content_hash, path, title, url, symbol, kind, start_line, end_line,
    ios_version_min, ios_version_max, ios_version_min_int, ios_version_max_int,
    swift_version, swift_version_int, deprecated, deprecated_in, deprecated_in_int,
    platforms, framework_tags, imports, attributes, last_verified, metadata
FROM {chunks}
WHERE chunk_id IN ({chunk_ids});
