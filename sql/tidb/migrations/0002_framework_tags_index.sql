-- only: tidb
-- Multi-valued index over the framework tags: JSON_OVERLAPS / MEMBER OF filters in the exact
-- (filter-first) scan read it through IndexMerge. CHAR(64) ARRAY because the cast needs a
-- length; MariaDB has no multi-valued index, so this migration is recorded there and skipped.
CREATE INDEX IF NOT EXISTS framework_tags_idx ON {chunks} ((CAST(framework_tags AS CHAR(64) ARRAY)));
