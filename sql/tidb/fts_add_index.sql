-- Native BM25 over the analysed text (the loader fills `body` in this mode).
ALTER TABLE {chunks} ADD FULLTEXT INDEX body_fts (body) WITH PARSER STANDARD;
