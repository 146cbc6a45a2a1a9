UPDATE meta SET model_id = :model_id, dim = :dim WHERE id = 1;
