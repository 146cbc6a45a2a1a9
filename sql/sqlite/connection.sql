-- Per-connection setup and explicit transactions.

-- name: connection_setup#
-- Run on every connection. WAL gives readers a snapshot of the last commit while a writer
-- works, so a search never sees half of a batch. NORMAL sync is safe from corruption in WAL
-- mode; a power cut may lose the last commits, which the next load redoes.
-- 16 KiB pages for new files (a no-op on existing ones): chunk rows of ~2 KB and FTS
-- segments need fewer pages and splits; a load ran 10-15% faster than with 4 KiB pages.
-- It must precede the switch to WAL, which fixes the page size of a new file.
PRAGMA page_size = 16384;
PRAGMA journal_mode = WAL;
PRAGMA synchronous = NORMAL;
PRAGMA temp_store = MEMORY;
PRAGMA cache_size = -65536;
-- A batch transaction grows the WAL to its own size; shrink it back after checkpoints.
PRAGMA journal_size_limit = 67108864;
-- Checkpoint every 4096 pages (64 MB) instead of every 1000: a load commits one batch after
-- another, and checkpointing after each copied the same FTS and index pages over and over
-- (commits took a third of a load's time). Readers are unaffected.
PRAGMA wal_autocheckpoint = 4096;

-- name: connection_read_only#
-- Reader connections open the file read-only (mode=ro: SQLite itself refuses any write) and
-- set nothing stored in it: the page size and journal mode are the writers' to set, and a
-- read-only connection may not. query_only as well, so that a reader that had to open the
-- file read-write (none does now) still could not write. They read the file through a
-- memory map (SQLite caps the size at its build's limit, 2 GiB by default): a query's point
-- reads of rows on pages not in the page cache cost a copy out of the OS's cache each
-- otherwise (ten whole chunk rows: ~190 µs read, ~95 µs mapped, at 100k chunks).
PRAGMA query_only = 1;
PRAGMA temp_store = MEMORY;
PRAGMA cache_size = -65536;
PRAGMA mmap_size = 4294967296;

-- name: read_probe
-- The first read of a reader connection: where it fails, the file cannot be read this way.
SELECT count(*) FROM sqlite_master;

-- name: tx_begin_read!
BEGIN DEFERRED;

-- name: tx_begin_write!
BEGIN IMMEDIATE;

-- name: tx_commit!
COMMIT;

-- name: tx_rollback!
ROLLBACK;
