-- The index's single meta row: model identity, generation, statistics.

-- name: meta_get
SELECT model_id, dim, created_at, instance_id, generation, vector_generation FROM meta WHERE id = 1;

-- name: meta_fts_analyzer
SELECT fts_analyzer FROM meta WHERE id = 1;

-- name: meta_bind_model!
UPDATE meta SET model_id = :model_id, dim = :dim WHERE id = 1;

-- name: meta_generation
SELECT instance_id, generation, vector_generation FROM meta WHERE id = 1;

-- name: meta_bump_generation!
UPDATE meta SET generation = generation + 1 WHERE id = 1;

-- name: meta_bump_vector_generation!
-- A commit that only added vectors (migration 0013).
UPDATE meta SET vector_generation = vector_generation + 1 WHERE id = 1;

-- name: stats_counts
SELECT
    (SELECT count(*) FROM documents),
    (SELECT count(*) FROM chunks),
    (SELECT count(*) FROM vectors),
    (SELECT count(*) FROM chunks_fts),
    (SELECT coalesce(max(version), 0) FROM schema_migrations);

-- name: max_chunk_rowid
SELECT coalesce(max(id), 0) FROM chunks;

-- name: meta_precision
SELECT embedding_precision FROM meta WHERE id = 1;

-- name: meta_set_precision!
UPDATE meta SET embedding_precision = :precision WHERE id = 1;

-- name: meta_fusion_calibration
SELECT fusion_calibration FROM meta WHERE id = 1;

-- name: meta_set_fusion_calibration!
UPDATE meta SET fusion_calibration = :calibration WHERE id = 1;

-- name: meta_text_keys_filled
SELECT text_keys_filled FROM meta WHERE id = 1;

-- name: meta_set_text_keys_filled!
UPDATE meta SET text_keys_filled = 1 WHERE id = 1;

-- name: chunks_without_text_key
-- The rows written before migration 0012, whose text_key the index fills on open, a batch at
-- a time in rowid order (a 1M-chunk index's text does not fit in memory at once).
SELECT id, content FROM chunks WHERE id > :after AND text_key IS NULL ORDER BY id LIMIT :n;

-- name: set_text_key!
UPDATE chunks SET text_key = :text_key WHERE id = :id;
