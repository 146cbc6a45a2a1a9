SELECT id FROM rag_fts_probe WHERE fts_match_word('probe', t) LIMIT 1;
