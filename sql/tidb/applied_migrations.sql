-- Bookkeeping of applied migrations (the migrations themselves are in migrations/).

-- name: migrations_table!
CREATE TABLE IF NOT EXISTS {migrations} (
    version    INT NOT NULL PRIMARY KEY,
    name       VARCHAR(128) NOT NULL,
    applied_at VARCHAR(32) NOT NULL
) DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- name: migrations_applied
SELECT version FROM {migrations} ORDER BY version;

-- name: migration_record!
-- IGNORE: two processes migrating a new index at once both run the (idempotent) DDL; the
-- first record wins.
INSERT IGNORE INTO {migrations} (version, name, applied_at)
VALUES (%(version)s, %(name)s, %(applied_at)s);
