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
