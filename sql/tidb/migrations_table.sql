CREATE TABLE IF NOT EXISTS {migrations} (
    version    INT NOT NULL PRIMARY KEY,
    name       VARCHAR(128) NOT NULL,
    applied_at VARCHAR(32) NOT NULL
) DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
