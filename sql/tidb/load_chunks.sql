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
    platforms, framework_tags, imports, attributes, last_verified, metadata,
    body_len, body, embedding
);
