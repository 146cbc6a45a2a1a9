DELETE FROM chunks_fts
WHERE rowid IN (
    SELECT id FROM chunks WHERE doc_id IN (SELECT value FROM json_each(:doc_ids))
);
