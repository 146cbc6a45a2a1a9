-- The full-text table keeps no copy of the text it indexes (FTS5 `content=''`): the copy was
-- ~1.6 KB of every chunk's ~6 KB, a second copy of chunks.content. Its analysed form is
-- computed again from chunks.context and chunks.content wherever it is needed: to delete a
-- row (FTS5's 'delete' command wants the text that was indexed) and to build the in-memory
-- keyword postings. meta.fts_analyzer names the analyzer version that wrote the table
-- (core/store/analyzer.py ANALYZER_VERSION); an index opened for writing with another
-- version re-indexes every chunk first, since a 'delete' with other tokens than the
-- indexed ones would corrupt the table. Pages freed here are reused by later writes;
-- `VACUUM` returns them to the file system.
CREATE VIRTUAL TABLE chunks_fts_contentless USING fts5 (
    body,
    content = '',
    tokenize = "unicode61 remove_diacritics 0 tokenchars '_'"
);
INSERT INTO chunks_fts_contentless (chunks_fts_contentless, rank)
SELECT 'pgsz', page_size - 46 FROM pragma_page_size();
INSERT INTO chunks_fts_contentless (rowid, body) SELECT rowid, body FROM chunks_fts;
DROP TABLE chunks_fts;
ALTER TABLE chunks_fts_contentless RENAME TO chunks_fts;
ALTER TABLE meta ADD COLUMN fts_analyzer INTEGER NOT NULL DEFAULT 1;
