SELECT model_id, dim, created_at, instance_id, generation FROM meta WHERE id = 1;
