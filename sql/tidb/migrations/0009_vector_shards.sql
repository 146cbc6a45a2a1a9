-- The ledger of a sharded vector phase (loaders/shards.py): one row per shard of pending
-- chunks. `done` is written in the transaction that writes the shard's vectors (a worker
-- writes its own shard), so a shard recorded done has its vectors and a shard run again by
-- a retry writes nothing twice; `failed` keeps the last error of a shard given up on (its
-- chunks stay pending, and the next run retries them). Idempotent.
CREATE TABLE IF NOT EXISTS {shards} (
    shard_id CHAR(64) NOT NULL PRIMARY KEY,
    state VARCHAR(16) NOT NULL,
    written INT NOT NULL DEFAULT 0,
    attempts INT NOT NULL DEFAULT 0,
    error TEXT,
    updated_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP
);
