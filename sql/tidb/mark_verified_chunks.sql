UPDATE {chunks} SET last_verified = %(when)s WHERE doc_id IN ({doc_ids});
