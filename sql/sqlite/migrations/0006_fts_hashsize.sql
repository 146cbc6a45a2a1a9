-- FTS5 collects a transaction's postings in an in-memory hash and writes them out as a new
-- segment whenever it grows past `hashsize` bytes (1 MB by default). A load batch of 2,560
-- chunks of ~300 tokens overflowed it several times, and every extra small segment is merged
-- again later: with 64 MB one batch becomes one segment, and a full-text insert went from
-- ~98 to ~70 µs per chunk (README, *Measured*; the option is FTS5's own `hashsize`,
-- kept in chunks_fts_config like `pgsz`). The memory is only held while a write is open.
INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('hashsize', 67108864);
