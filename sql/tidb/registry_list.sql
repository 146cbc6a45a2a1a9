SELECT name FROM rag_indexes ORDER BY name;
