SELECT model_id, dim, created_at, vector_index, bm25_mode, bm25_docs, bm25_total_len
FROM {meta} WHERE id = 1;
