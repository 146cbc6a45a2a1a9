DELETE FROM {chunks} WHERE doc_id IN ({doc_ids});
