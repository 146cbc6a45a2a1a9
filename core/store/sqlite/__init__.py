"""The embedded store: one SQLite file per named index (FTS5 for BM25, vectors in memory)."""
