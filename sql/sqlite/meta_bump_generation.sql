UPDATE meta SET generation = generation + 1 WHERE id = 1;
