-- No statement reads chunks by domain or by source any more: filters are applied to the rows
-- a search found (in memory, or joined to FTS5's matches), never used to look rows up. The two
-- indexes only cost every chunk insert two more B-tree writes and ~36 bytes.
DROP INDEX IF EXISTS chunks_domain;
DROP INDEX IF EXISTS chunks_source;
