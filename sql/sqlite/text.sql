-- Compressed chunk text (core/store/sqlite/chunk_text.py): the zstd dictionaries its frames name.

-- name: text_dictionaries
SELECT dict_id, data FROM text_dictionaries;

-- name: text_dictionary_newest
SELECT dict_id FROM text_dictionaries ORDER BY seq DESC LIMIT 1;

-- name: text_dictionary_add!
INSERT INTO text_dictionaries (dict_id, data) VALUES (:dict_id, :data);
