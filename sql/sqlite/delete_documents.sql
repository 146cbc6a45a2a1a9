DELETE FROM documents WHERE doc_id IN (SELECT value FROM json_each(:doc_ids));
