-- What `symbol NAME` reads besides the rows of NAME, each through an index (the SQLite
-- store's 0010_references_lookups.sql has the partial indexes this dialect lacks): the rows
-- of a file by its path, the imports of the files that use the name and the calls made
-- inside a declaration (by document, kind of use and enclosing declaration), and the
-- declarations of the names it calls. Prefixes keep each key within InnoDB's 3,072 bytes.
CREATE INDEX IF NOT EXISTS path_idx ON {chunks} (path(255));
CREATE INDEX IF NOT EXISTS doc_role_scope_idx ON {refs} (doc_id, role, scope(128));
CREATE INDEX IF NOT EXISTS name_role_idx ON {refs} (name, role);
