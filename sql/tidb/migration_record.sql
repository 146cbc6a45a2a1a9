-- IGNORE: two processes migrating a new index at once both run the (idempotent) DDL; the
-- first record wins.
INSERT IGNORE INTO {migrations} (version, name, applied_at)
VALUES (%(version)s, %(name)s, %(applied_at)s);
