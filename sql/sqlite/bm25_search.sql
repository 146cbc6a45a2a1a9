-- BM25 over the analysed text with the metadata filter of index.filters.SearchFilter.admits.
-- Every predicate mirrors one rule there, NULLs included; list parameters are JSON arrays
-- (NULL = no restriction), so the statement text never changes with the filter.
SELECT c.chunk_id, bm25(chunks_fts) AS rank
FROM chunks_fts
JOIN chunks AS c ON c.id = chunks_fts.rowid
WHERE chunks_fts MATCH :match
  AND (:sources IS NULL
       OR coalesce(c.source IN (SELECT value FROM json_each(:sources)), 0))
  AND (:domains IS NULL
       OR coalesce(c.domain IN (SELECT value FROM json_each(:domains)), 0)
       OR (:include_user_codebase AND coalesce(c.source = :user_codebase, 0)))
  AND (:include_user_codebase OR c.source IS NULL OR c.source <> :user_codebase)
  AND (:target IS NULL
       OR ((c.ios_version_min_int IS NULL OR c.ios_version_min_int <= :target)
           AND (c.ios_version_max_int IS NULL OR c.ios_version_max_int >= :target)
           AND (:include_deprecated
                OR NOT coalesce(c.deprecated, 0)
                OR (c.deprecated_in_int IS NOT NULL AND c.deprecated_in_int > :target))))
  AND (:frameworks IS NULL
       OR EXISTS (SELECT 1 FROM json_each(c.framework_tags) AS t
                  WHERE t.value IN (SELECT value FROM json_each(:frameworks))))
  AND (:cutoff IS NULL
       OR c.last_verified IS NULL
       OR substr(c.last_verified, 1, 10) >= :cutoff)
ORDER BY rank, c.chunk_id
LIMIT :k;
