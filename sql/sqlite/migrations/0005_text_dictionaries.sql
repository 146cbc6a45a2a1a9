-- chunks.content may now hold a zstd frame (a BLOB) instead of TEXT
-- (core/store/sqlite/chunk_text.py): ~1 KB less per chunk of 1.5 KB. A frame names the
-- dictionary it was compressed with by zstd's dictionary id; the dictionaries are kept here,
-- written in the same transaction as the first rows compressed with them. Rows written
-- before stay TEXT and are read as they are.
CREATE TABLE text_dictionaries (
    seq     INTEGER PRIMARY KEY,
    dict_id INTEGER NOT NULL UNIQUE,
    data    BLOB NOT NULL
);
