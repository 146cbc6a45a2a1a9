-- The full-text index must go before the table can be dropped.
ALTER TABLE rag_fts_probe DROP INDEX ft_t;
DROP TABLE IF EXISTS rag_fts_probe;
