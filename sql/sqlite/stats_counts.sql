SELECT
    (SELECT count(*) FROM documents),
    (SELECT count(*) FROM chunks),
    (SELECT count(*) FROM vectors),
    (SELECT count(*) FROM chunks_fts),
    (SELECT coalesce(max(version), 0) FROM schema_migrations);
