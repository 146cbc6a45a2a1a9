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
