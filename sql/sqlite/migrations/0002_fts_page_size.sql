-- FTS5 writes its segments in leaves of `pgsz` bytes (default 4050, sized for 4 KiB pages).
-- Files created with 16 KiB pages (connection_setup.sql) get leaves that fill a page;
-- older 4 KiB files get the default again, so this is a no-op for them.
INSERT INTO chunks_fts (chunks_fts, rank)
SELECT 'pgsz', page_size - 46 FROM pragma_page_size();
