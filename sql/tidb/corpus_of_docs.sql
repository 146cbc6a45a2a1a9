-- The chunks a batch is about to replace, locked so a concurrent batch cannot count them too.
SELECT COUNT(*), COALESCE(SUM(body_len), 0) FROM {chunks}
WHERE doc_id IN ({doc_ids}) FOR UPDATE;
