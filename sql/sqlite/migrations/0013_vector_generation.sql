-- Counts the commits that added vectors and nothing else (the vector phase of an ingest,
-- loaders/vectors.py). The in-memory vector matrix is rebuilt after either counter moves;
-- the keyword postings only after `generation` does: a vector commit changes no text, and
-- rebuilding the postings costs ~12 s at 100k chunks.
ALTER TABLE meta ADD COLUMN vector_generation INTEGER NOT NULL DEFAULT 0;
