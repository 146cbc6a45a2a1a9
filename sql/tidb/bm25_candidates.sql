-- Okapi BM25 over the postings table, k1 = %(k1)s, b = %(b)s:
--   idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5))
--   score  = sum over query terms of idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))
-- N and avgdl come from the corpus statistics in {meta}. The 1e0 factors keep the
-- arithmetic in DOUBLE: MariaDB divides integers as DECIMAL with 4 fraction digits.
-- {terms} is one placeholder per query term (the values are bound).
SELECT c.chunk_id, sc.score
FROM (
    SELECT p.chunk_id,
           SUM(LN(1e0 + (s.n - d.df + 0.5e0) / (d.df + 0.5e0))
               * p.tf * (%(k1)s + 1e0)
               / (p.tf + %(k1)s * (1e0 - %(b)s + %(b)s * p.doc_len / s.avgdl))) AS score
    FROM {postings} AS p
    JOIN (
        SELECT term, COUNT(*) AS df FROM {postings} WHERE term IN ({terms}) GROUP BY term
    ) AS d ON d.term = p.term
    CROSS JOIN (
        SELECT bm25_docs * 1e0 AS n, bm25_total_len * 1e0 / GREATEST(bm25_docs, 1) AS avgdl
        FROM {meta} WHERE id = 1
    ) AS s
    WHERE p.term IN ({terms})
    GROUP BY p.chunk_id
) AS sc
JOIN {chunks} AS c ON c.chunk_id = sc.chunk_id
WHERE {filter}
ORDER BY sc.score DESC, c.chunk_id
LIMIT %(k)s
