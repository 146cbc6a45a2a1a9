-- The precision(s) the index's vectors were embedded in, joined by "+" when precisions that
-- held the model's quality guard share it (core/embedding/precision.py). NULL with a bound
-- model means fp32: every index before this migration was embedded in fp32.
ALTER TABLE meta ADD COLUMN embedding_precision TEXT;
