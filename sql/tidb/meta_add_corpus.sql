-- BM25 corpus statistics move by the batch's delta inside the batch's transaction, so they
-- always describe exactly the committed chunks.
UPDATE {meta}
SET bm25_docs = bm25_docs + %(docs)s, bm25_total_len = bm25_total_len + %(total_len)s
WHERE id = 1;
