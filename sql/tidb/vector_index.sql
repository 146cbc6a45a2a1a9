-- The documented HNSW index form: double parentheses around the distance expression, only
-- on a fixed-dimension VECTOR(D) column. Only used for ORDER BY VEC_COSINE_DISTANCE(...) LIMIT
-- k with no WHERE in the same query block (see vector_ann_candidates.sql).
ALTER TABLE {chunks} ADD VECTOR INDEX embedding_hnsw ((VEC_COSINE_DISTANCE(embedding))) USING HNSW;
