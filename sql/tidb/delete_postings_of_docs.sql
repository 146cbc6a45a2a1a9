DELETE FROM {postings} WHERE doc_id IN ({doc_ids});
