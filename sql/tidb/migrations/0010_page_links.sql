-- Published pages' links (refs of role 'link') are read whole to build the link places, and
-- their target is matched by URL to a document's first chunk. Prefixes keep each key within
-- InnoDB's 3,072 bytes.
CREATE INDEX IF NOT EXISTS role_chunk_idx ON {refs} (role, chunk_id);
CREATE INDEX IF NOT EXISTS url_idx ON {chunks} (url(255));
