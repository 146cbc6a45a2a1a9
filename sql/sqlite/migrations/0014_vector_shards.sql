-- The ledger of a sharded vector phase (loaders/shards.py): one row per shard of pending
-- chunks. `done` is written in the transaction that writes the shard's vectors, so a shard
-- recorded done has its vectors and a retried shard writes nothing twice; `failed` keeps the
-- last error of a shard given up on (its chunks stay pending, and the next run retries them).
CREATE TABLE IF NOT EXISTS vector_shards (
    shard_id TEXT PRIMARY KEY,
    state TEXT NOT NULL,
    written INTEGER NOT NULL DEFAULT 0,
    attempts INTEGER NOT NULL DEFAULT 0,
    error TEXT,
    updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
);
