-- Locks the row: two processes binding a new index at once bind it once.
SELECT model_id, dim FROM {meta} WHERE id = 1 FOR UPDATE;
