UPDATE {meta} SET model_id = %(model_id)s, dim = %(dim)s WHERE id = 1;
