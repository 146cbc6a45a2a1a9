-- One round trip per query variant: vector candidates and BM25 candidates, each with its
-- rank, in one statement; the query side fuses them (query.fusion), as for every store.
-- Ties break by chunk id in each list. The two candidate statements are those of the
-- single-signal searches, inlined.
-- Each CTE is read once (UNION ALL, then GROUP BY) rather than through LEFT JOINs: MariaDB
-- does not materialise a CTE read twice, so a join would run each search twice; TiDB's
-- full-text functions also allow no outer joins.
WITH
vec AS (
    SELECT v.chunk_id, v.distance, ROW_NUMBER() OVER (ORDER BY v.distance, v.chunk_id) AS r
    FROM ({vector_candidates}) AS v
),
kw AS (
    SELECT b.chunk_id, b.score, ROW_NUMBER() OVER (ORDER BY b.score DESC, b.chunk_id) AS r
    FROM ({bm25_candidates}) AS b
),
ranks AS (
    SELECT chunk_id, r AS vector_rank, 1e0 - distance AS similarity,
           NULL AS bm25_rank, NULL AS bm25_score
    FROM vec
    UNION ALL
    SELECT chunk_id, NULL, NULL, r, score
    FROM kw
)
SELECT chunk_id, MAX(vector_rank) AS vector_rank, MAX(similarity) AS similarity,
       MAX(bm25_rank) AS bm25_rank, MAX(bm25_score) AS bm25_score
FROM ranks
GROUP BY chunk_id
ORDER BY chunk_id
