-- Each chunk's text_key (core/store/text_key.py): a fingerprint of its normalised content, so
-- that fusion deduplicates candidates without fetching their text. Written by the loader with
-- the chunk. Idempotent; rows loaded before it keep NULL, and a query whose candidates include
-- such a row fetches their text and compares it, as before (no result changes, only speed).
ALTER TABLE {chunks} ADD COLUMN IF NOT EXISTS text_key BIGINT;
