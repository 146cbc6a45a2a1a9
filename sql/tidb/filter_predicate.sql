-- index.filters.SearchFilter.admits over the row alias `c`, one rule per line, NULLs
-- included. List parameters are JSON arrays (NULL = no restriction), so the statement text
-- does not change with the filter. A fragment, inlined into the search statements.
(%(sources)s IS NULL
     OR COALESCE(JSON_CONTAINS(%(sources)s, JSON_QUOTE(c.source)), 0)
     OR (c.source IS NULL AND JSON_CONTAINS(%(sources)s, 'null')))
AND (%(domains)s IS NULL
     OR COALESCE(JSON_CONTAINS(%(domains)s, JSON_QUOTE(c.domain)), 0)
     OR (c.domain IS NULL AND JSON_CONTAINS(%(domains)s, 'null'))
     OR (%(include_user_codebase)s AND COALESCE(c.source = %(user_codebase)s, 0)))
AND (%(include_user_codebase)s OR c.source IS NULL OR c.source <> %(user_codebase)s)
AND (%(target)s IS NULL
     OR ((c.ios_version_min_int IS NULL OR c.ios_version_min_int <= %(target)s)
         AND (c.ios_version_max_int IS NULL OR c.ios_version_max_int >= %(target)s)
         AND (%(include_deprecated)s
              OR c.deprecated = 0
              OR (c.deprecated_in_int IS NOT NULL AND c.deprecated_in_int > %(target)s))))
AND (%(frameworks)s IS NULL OR JSON_OVERLAPS(c.framework_tags, %(frameworks)s))
AND (%(cutoff)s IS NULL
     OR c.last_verified IS NULL
     OR SUBSTRING(c.last_verified, 1, 10) >= %(cutoff)s)
