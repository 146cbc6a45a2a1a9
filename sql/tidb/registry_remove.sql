DELETE FROM rag_indexes WHERE name = %(name)s;
