-- Bookkeeping of applied migrations (the migrations themselves are in migrations/).

-- name: schema_migrations!
CREATE TABLE IF NOT EXISTS schema_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    applied_at TEXT NOT NULL
);

-- name: migrations_applied
SELECT version FROM schema_migrations ORDER BY version;

-- name: migration_record!
INSERT INTO schema_migrations (version, name, applied_at) VALUES (:version, :name, :applied_at);

-- name: schema_migrations_present
-- Whether the bookkeeping table exists: a reader cannot create it.
SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations';
