DELETE FROM vectors
WHERE chunk_id IN (
    SELECT chunk_id FROM chunks WHERE doc_id IN (SELECT value FROM json_each(:doc_ids))
);
