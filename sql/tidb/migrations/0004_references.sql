-- What the code of each chunk declares and uses (core.store.contract.REFERENCE_SCHEMA),
-- replaced with the chunk's document in the same transaction. Looked up by name (a symbol
-- query) and by document (its deletion, and the declarations of one file).
CREATE TABLE IF NOT EXISTS {refs} (
    chunk_id  VARCHAR(512) NOT NULL,
    doc_id    VARCHAR(512) NOT NULL,
    name      VARCHAR(512) NOT NULL,
    role      VARCHAR(32) NOT NULL,
    kind      VARCHAR(64) NOT NULL DEFAULT '',
    line      INT NOT NULL,
    end_line  INT NOT NULL,
    scope     VARCHAR(512) NOT NULL DEFAULT '',
    qualifier VARCHAR(512) NOT NULL DEFAULT '',
    KEY name_idx (name),
    KEY doc_id_idx (doc_id)
) DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- An index made before this table has none of its code's references, and an incremental
-- run would never read its unchanged files again: its code documents are marked changed
-- (no hash, no mtime), so the next run re-chunks them (their vectors come from the
-- embedding cache) and writes their references. Prose documents are left as they are.
UPDATE {documents} SET content_hash = '', mtime = NULL
WHERE doc_id IN (SELECT doc_id FROM {chunks} WHERE chunk_type IN ('code_declaration', 'user_code'));
