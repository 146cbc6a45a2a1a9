-- What `symbol NAME` reads besides the rows of NAME, each through an index of its own so that
-- a lookup on an index of 100k chunks costs milliseconds (bench/symbol_lookup.py): the rows
-- of a file by its path (before this, a scan of every reference per file), the imports of
-- the documents that use the name, the calls made inside a declaration, and the declarations of
-- the names it calls. The partial indexes hold only those rows (imports, calls and
-- declarations are a small part of all references).
CREATE INDEX IF NOT EXISTS chunks_path ON chunks (path);
CREATE INDEX IF NOT EXISTS refs_imports ON refs (doc_id) WHERE role = 'import';
CREATE INDEX IF NOT EXISTS refs_calls ON refs (doc_id, scope) WHERE role IN ('call', 'send');
CREATE INDEX IF NOT EXISTS refs_definitions ON refs (name) WHERE role = 'definition';
