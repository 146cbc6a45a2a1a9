-- Native full-text BM25 (fts_match_word: query first, column second; the query must be a
-- constant, which client-side binding produces). Only one match call, so ORDER BY on it works.
SELECT c.chunk_id, fts_match_word(%(text)s, c.body) AS score
FROM {chunks} AS c
WHERE fts_match_word(%(text)s, c.body) AND {filter}
ORDER BY score DESC, c.chunk_id
LIMIT %(k)s
