SELECT COUNT(*) FROM rag_indexes WHERE name = %(name)s;
