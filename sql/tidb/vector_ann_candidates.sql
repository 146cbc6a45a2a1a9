-- Vector candidates through the HNSW index. TiDB uses it only for ORDER BY
-- VEC_COSINE_DISTANCE(embedding, const) LIMIT n with no WHERE in the same query block, so the
-- inner block over-fetches %(fetch)s rows with the filter columns and the filter runs
-- outside. The caller widens %(fetch)s when fewer than %(k)s survive (tidb_search.py).
SELECT c.chunk_id, c.distance
FROM (
    SELECT chunk_id, source, domain, ios_version_min_int, ios_version_max_int, deprecated,
           deprecated_in_int, framework_tags, last_verified,
           VEC_COSINE_DISTANCE(embedding, %(query)s) AS distance
    FROM {chunks}
    ORDER BY distance
    LIMIT %(fetch)s
) AS c
WHERE c.distance IS NOT NULL AND {filter}
ORDER BY c.distance, c.chunk_id
LIMIT %(k)s
