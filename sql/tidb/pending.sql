-- Chunks loaded without a vector (an ingest's lexical phase) and given theirs later by its
-- vector phase (loaders/vectors.py).

-- name: pending_vector_rows
-- Chunks whose embedding is NULL, in chunk_id order after %(after)s: the vector phase pages
-- through them by the primary key.
SELECT chunk_id, doc_id, content_hash, context, content, language
FROM {chunks}
WHERE chunk_id > %(after)s AND embedding IS NULL
ORDER BY chunk_id
LIMIT %(limit)s;

-- name: put_pending_vector!
-- Only while the chunk holds the text the vector was computed from (content_hash covers its
-- context and content) and has none yet: a vector of a replaced or deleted chunk never lands.
UPDATE {chunks} SET embedding = %s
WHERE chunk_id = %s AND content_hash = %s AND embedding IS NULL;

-- name: chunks_without_vector
-- Which of these chunks have no vector yet: a query's fusion counts their BM25 standing for
-- the vector leg (query/retrieval/fusion.py). Primary-key lookups.
SELECT chunk_id
FROM {chunks}
WHERE chunk_id IN ({chunk_ids}) AND embedding IS NULL;
