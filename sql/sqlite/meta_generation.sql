SELECT instance_id, generation FROM meta WHERE id = 1;
