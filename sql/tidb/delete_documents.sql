DELETE FROM {documents} WHERE doc_id IN ({doc_ids});
