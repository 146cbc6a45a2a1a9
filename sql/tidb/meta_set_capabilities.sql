UPDATE {meta} SET vector_index = %(vector_index)s, bm25_mode = %(bm25_mode)s WHERE id = 1;
