INSERT INTO chunks_fts (rowid, body) VALUES (?, ?);
