INSERT IGNORE INTO rag_indexes (name, created_at) VALUES (%(name)s, %(created_at)s);
