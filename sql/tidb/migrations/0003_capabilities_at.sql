-- When the index's capability probe (vector column, HNSW index, full-text mode) finished.
-- NULL = not yet, so the next bind_model runs it again; indexes bound before this migration
-- are re-probed once (each step is idempotent, and a loaded index keeps its BM25 mode).
ALTER TABLE {meta} ADD COLUMN IF NOT EXISTS capabilities_at VARCHAR(32);
