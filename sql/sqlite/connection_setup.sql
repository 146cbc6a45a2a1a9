-- Run on every connection. WAL gives readers a snapshot of the last commit while a writer
-- works, so a search never sees half of a batch. NORMAL sync is safe from corruption in WAL
-- mode; a power cut may lose the last commits, which the next load redoes.
PRAGMA journal_mode = WAL;
PRAGMA synchronous = NORMAL;
PRAGMA temp_store = MEMORY;
PRAGMA cache_size = -65536;
-- A batch transaction grows the WAL to its own size; shrink it back after checkpoints.
PRAGMA journal_size_limit = 67108864;
