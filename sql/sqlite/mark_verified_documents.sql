UPDATE documents SET last_verified = :when
WHERE doc_id IN (SELECT value FROM json_each(:doc_ids));
