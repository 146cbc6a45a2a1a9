-- Exact filtered scan: the filter first (secondary and multi-valued indexes apply), then the
-- distance of every admitted row. The fallback when over-fetching cannot find k.
SELECT c.chunk_id, VEC_COSINE_DISTANCE(c.embedding, %(query)s) AS distance
FROM {chunks} AS c
WHERE c.embedding IS NOT NULL AND {filter}
ORDER BY distance, c.chunk_id
LIMIT %(k)s
