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

-- name: record_shard_done!
-- In the transaction that writes the shard's vectors; `written` adds up over the shard's runs
-- (a retry of a shard that had committed writes none).
INSERT INTO {shards} (shard_id, state, written, attempts, error)
VALUES (%(shard_id)s, 'done', %(written)s, %(attempts)s, NULL)
ON DUPLICATE KEY UPDATE
    state = 'done', written = written + VALUES(written), attempts = VALUES(attempts), error = NULL,
    updated_at = CURRENT_TIMESTAMP;

-- name: record_shard_failed!
-- A shard given up on, with its error; a shard already done stays done.
INSERT INTO {shards} (shard_id, state, written, attempts, error)
VALUES (%(shard_id)s, 'failed', 0, %(attempts)s, %(error)s)
ON DUPLICATE KEY UPDATE
    attempts = IF(state = 'done', attempts, VALUES(attempts)),
    error = IF(state = 'done', error, VALUES(error)),
    state = IF(state = 'done', state, 'failed'),
    updated_at = CURRENT_TIMESTAMP;

-- name: shard_states
-- The ledger's state of these shards; shards never recorded are left out.
SELECT shard_id, state FROM {shards} WHERE shard_id IN ({shard_ids});
