-- Each chunk's text_key (core/store/text_key.py): a fingerprint of its normalised content, so
-- that fusion deduplicates candidates without fetching and decompressing their text. Written
-- with the chunk; the rows of an index made before this migration get theirs when it is next
-- opened (SQLiteIndex fills every row without one, then sets text_keys_filled).
ALTER TABLE chunks ADD COLUMN text_key INTEGER;
ALTER TABLE meta ADD COLUMN text_keys_filled INTEGER NOT NULL DEFAULT 0;
