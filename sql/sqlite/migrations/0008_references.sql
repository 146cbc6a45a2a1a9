-- What the code of each chunk declares and uses (core.store.contract.REFERENCE_SCHEMA),
-- replaced with the chunk's document in the same transaction. Looked up by name (a symbol
-- query) and by document (its deletion, and the declarations of one file).
CREATE TABLE IF NOT EXISTS refs (
    chunk_id  TEXT NOT NULL,
    doc_id    TEXT NOT NULL,
    name      TEXT NOT NULL,
    role      TEXT NOT NULL,
    kind      TEXT NOT NULL DEFAULT '',
    line      INTEGER NOT NULL,
    end_line  INTEGER NOT NULL,
    scope     TEXT NOT NULL DEFAULT '',
    qualifier TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS refs_name ON refs (name);
CREATE INDEX IF NOT EXISTS refs_doc ON refs (doc_id);
-- An index made before this table has none of its code's references, and an incremental
-- run would never read its unchanged files again: its code documents are marked changed
-- (no hash, no mtime), so the next run re-chunks them (their vectors come from the
-- embedding cache) and writes their references. Prose documents are left as they are.
UPDATE documents SET content_hash = '', mtime = NULL
WHERE doc_id IN (SELECT doc_id FROM chunks WHERE chunk_type IN ('code_declaration', 'user_code'));
