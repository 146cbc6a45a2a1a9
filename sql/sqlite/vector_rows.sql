-- Everything the in-memory vector search needs: the vector and the filterable columns.
SELECT
    c.chunk_id, c.domain, c.source, c.ios_version_min_int, c.ios_version_max_int,
    c.deprecated, c.deprecated_in_int, c.framework_tags, c.last_verified, v.embedding
FROM chunks AS c
JOIN vectors AS v ON v.chunk_id = c.chunk_id
ORDER BY c.id;
