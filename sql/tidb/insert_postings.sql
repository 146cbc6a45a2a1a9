INSERT INTO {postings} (term, chunk_id, doc_id, tf, doc_len) VALUES (%s, %s, %s, %s, %s);
