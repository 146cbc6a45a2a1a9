INSERT INTO vectors (chunk_id, embedding) VALUES (?, ?);
