-- The index's single meta row: model identity, generation, statistics.

-- name: meta_get
SELECT model_id, dim, created_at, vector_index, bm25_mode, bm25_docs, bm25_total_len
FROM {meta} WHERE id = 1;

-- name: meta_get_for_update
-- Locks the row: two processes binding a new index at once bind it once.
SELECT model_id, dim FROM {meta} WHERE id = 1 FOR UPDATE;

-- name: meta_bind_model!
UPDATE {meta} SET model_id = %(model_id)s, dim = %(dim)s WHERE id = 1;

-- name: meta_set_capabilities!
-- capabilities_at marks the probe finished: until then bind_model resumes it (the DDL
-- before it commits statement by statement, so a crash can stop it anywhere).
UPDATE {meta}
SET vector_index = %(vector_index)s, bm25_mode = %(bm25_mode)s, capabilities_at = %(at)s
WHERE id = 1;

-- name: meta_capabilities_at
SELECT capabilities_at FROM {meta} WHERE id = 1;

-- name: chunks_any
SELECT EXISTS (SELECT 1 FROM {chunks});

-- name: meta_add_corpus!
-- BM25 corpus statistics move by the batch's delta inside the batch's transaction, so they
-- always describe exactly the committed chunks.
UPDATE {meta}
SET bm25_docs = bm25_docs + %(docs)s, bm25_total_len = bm25_total_len + %(total_len)s
WHERE id = 1;

-- name: corpus_of_docs
-- The chunks a batch is about to replace, locked so a concurrent batch cannot count them too.
SELECT COUNT(*), COALESCE(SUM(body_len), 0) FROM {chunks}
WHERE doc_id IN ({doc_ids}) FOR UPDATE;

-- name: stats_counts
SELECT
    (SELECT COUNT(*) FROM {documents}),
    (SELECT COUNT(*) FROM {chunks}),
    (SELECT COALESCE(MAX(version), 0) FROM {migrations});

-- name: stats_vectors
SELECT COUNT(*) FROM {chunks} WHERE embedding IS NOT NULL;

-- name: meta_fusion_calibration
SELECT fusion_calibration FROM {meta} WHERE id = 1;

-- name: meta_set_fusion_calibration!
UPDATE {meta} SET fusion_calibration = %(calibration)s WHERE id = 1;
