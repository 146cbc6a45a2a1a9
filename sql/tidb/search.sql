-- Candidates for a query: the shared filter predicate, vector and keyword legs, both in one statement.

-- name: filter_predicate!
-- index.filters.SearchFilter.admits over the row alias `c`, one rule per line, NULLs
-- included. List parameters are JSON arrays (NULL = no restriction), so the statement text
-- does not change with these parts of the filter. A fragment, inlined into the search
-- statements; filter_frameworks follows it when the filter names frameworks.
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
AND (%(cutoff)s IS NULL
     OR c.last_verified IS NULL
     OR SUBSTRING(c.last_verified, 1, 10) >= %(cutoff)s)

-- name: filter_frameworks!
-- The frameworks rule, rendered only when the filter has one: a plain conjunct rather than
-- `(%(frameworks)s IS NULL OR JSON_OVERLAPS(...))`, because TiDB reads a multi-valued index
-- (framework_tags_idx, migration 0002) for JSON_OVERLAPS/MEMBER OF/JSON_CONTAINS but "for a
-- query with complex conditions ... might not be able to select" it (choose-index docs).
AND JSON_OVERLAPS(c.framework_tags, %(frameworks)s)

-- name: vector_ann_candidates
-- Vector candidates through the HNSW index. TiDB uses it only for ORDER BY
-- VEC_COSINE_DISTANCE(embedding, const) LIMIT n with no WHERE in the same query block, so the
-- inner block over-fetches %(fetch)s rows with the filter columns and the filter runs
-- outside. The caller widens %(fetch)s when fewer than %(k)s survive (tidb_search.py).
-- READ_FROM_STORAGE: on a small table TiDB's optimizer may read TiKV, where there is no HNSW
-- index (vector-search-hybrid-search-sql); MariaDB reads the hint as a comment.
SELECT c.chunk_id, c.distance
FROM (
    SELECT /*+ READ_FROM_STORAGE(TIFLASH[{chunks}]) */ chunk_id, source, domain, ios_version_min_int, ios_version_max_int, deprecated,
           deprecated_in_int, framework_tags, last_verified,
           VEC_COSINE_DISTANCE(embedding, %(query)s) AS distance
    FROM {chunks}
    ORDER BY distance
    LIMIT %(fetch)s
) AS c
WHERE c.distance IS NOT NULL AND {filter}
ORDER BY c.distance, c.chunk_id
LIMIT %(k)s

-- name: vector_exact_candidates
-- Exact filtered scan: the filter first (secondary and multi-valued indexes apply), then the
-- distance of every admitted row. The fallback when over-fetching cannot find k.
-- An all-zero vector's cosine distance is NULL, and NULL sorts first under ASC: such rows
-- are left out here as on the ANN path, or they would take the first places.
SELECT e.chunk_id, e.distance
FROM (
    SELECT c.chunk_id, VEC_COSINE_DISTANCE(c.embedding, %(query)s) AS distance
    FROM {chunks} AS c
    WHERE c.embedding IS NOT NULL AND {filter}
) AS e
WHERE e.distance IS NOT NULL
ORDER BY e.distance, e.chunk_id
LIMIT %(k)s

-- name: bm25_candidates
-- Okapi BM25 over the postings table, k1 = %(k1)s, b = %(b)s:
--   idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5))
--   score  = sum over query terms of idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))
-- N and avgdl come from the corpus statistics in {meta}, df from {term_df} (the sum of a
-- term's shards). {term_postings} is one bm25_term_postings read per query term, joined by
-- UNION ALL: each reads at most %(per_term)s postings, so the statement reads at most
-- terms x (per_term + shards) rows of postings and term_df, however common a term is. A term
-- with no more postings than that is read whole, and the score is exact BM25.
-- The 1e0 factors keep the arithmetic in DOUBLE: MariaDB divides integers as DECIMAL with 4
-- fraction digits.
SELECT c.chunk_id, sc.score
FROM (
    SELECT p.chunk_id,
           SUM(LN(1e0 + (s.n - d.df + 0.5e0) / (d.df + 0.5e0))
               * p.tf * (%(k1)s + 1e0)
               / (p.tf + %(k1)s * (1e0 - %(b)s + %(b)s * p.doc_len / s.avgdl))) AS score
    FROM ({term_postings}) AS p
    JOIN (
        SELECT term, SUM(df) AS df FROM {term_df} WHERE term IN ({terms}) GROUP BY term
    ) AS d ON d.term = p.term
    CROSS JOIN (
        SELECT bm25_docs * 1e0 AS n, bm25_total_len * 1e0 / GREATEST(bm25_docs, 1) AS avgdl
        FROM {meta} WHERE id = 1
    ) AS s
    GROUP BY p.chunk_id
) AS sc
JOIN {chunks} AS c ON c.chunk_id = sc.chunk_id
WHERE {filter}
ORDER BY sc.score DESC, c.chunk_id
LIMIT %(k)s

-- name: bm25_term_postings!
-- One query term's postings, highest impact first, at most %(per_term)s: a backward range
-- scan of term_impact_idx (term, impact, chunk_id, tf, doc_len) stopped by the LIMIT, with
-- no sort and no row lookup (the index covers the columns). Both ORDER BY keys descend so one
-- backward scan serves them: TiDB reads a descending index backwards, it stores none.
-- A fragment: bm25_candidates joins one per term with UNION ALL (a derived table per term,
-- which both servers accept; neither has LATERAL joins).
SELECT term, chunk_id, tf, doc_len
FROM (
    SELECT term, chunk_id, tf, doc_len FROM {postings}
    WHERE term = {term}
    ORDER BY impact DESC, chunk_id DESC
    LIMIT %(per_term)s
) AS tp

-- name: bm25_native_candidates
-- Native full-text BM25 (fts_match_word: query first, column second; the query must be a
-- constant, which client-side binding produces). Only one match call, so ORDER BY on it works.
SELECT c.chunk_id, fts_match_word(%(text)s, c.body) AS score
FROM {chunks} AS c
WHERE fts_match_word(%(text)s, c.body) AND {filter}
ORDER BY score DESC, c.chunk_id
LIMIT %(k)s

-- name: hybrid_search
-- One round trip per query variant: vector candidates and BM25 candidates, each with its
-- rank, in one statement; the query side fuses them (query.fusion), as for every store.
-- Ties break by chunk id in each list. The two candidate statements are those of the
-- single-signal searches, inlined.
-- Each CTE is read once (UNION ALL, then GROUP BY) rather than through LEFT JOINs: MariaDB
-- does not materialise a CTE read twice, so a join would run each search twice; TiDB's
-- full-text functions also allow no outer joins.
WITH
vec AS (
    SELECT v.chunk_id, v.distance, ROW_NUMBER() OVER (ORDER BY v.distance, v.chunk_id) AS r
    FROM ({vector_candidates}) AS v
),
kw AS (
    SELECT b.chunk_id, b.score, ROW_NUMBER() OVER (ORDER BY b.score DESC, b.chunk_id) AS r
    FROM ({bm25_candidates}) AS b
),
ranks AS (
    SELECT chunk_id, r AS vector_rank, 1e0 - distance AS similarity,
           NULL AS bm25_rank, NULL AS bm25_score
    FROM vec
    UNION ALL
    SELECT chunk_id, NULL, NULL, r, score
    FROM kw
)
SELECT chunk_id, MAX(vector_rank) AS vector_rank, MAX(similarity) AS similarity,
       MAX(bm25_rank) AS bm25_rank, MAX(bm25_score) AS bm25_score
FROM ranks
GROUP BY chunk_id
ORDER BY chunk_id

-- name: document_states
SELECT doc_id, content_hash, mtime, source_path, last_verified FROM {documents};

-- name: document_titles
-- Each titled document's first chunk: the dictionary that CoRAG's link hops match against
-- the text of retrieved chunks (query/links.py).
SELECT title, chunk_id FROM {chunks}
WHERE chunk_index = 0 AND title IS NOT NULL AND title <> '';

-- name: document_links
-- The links published pages state (refs of role 'link', named by the target's URL) whose
-- target is in the index: the linking chunk and its document, how the page relates to the
-- target (parent, topic, ...), the title, the target's first chunk.
SELECT r.chunk_id, r.doc_id, r.kind, r.qualifier, c.chunk_id FROM {refs} AS r
JOIN {chunks} AS c ON c.url = r.name AND c.chunk_index = 0
WHERE r.role = 'link';

-- name: chunk_symbols
-- The declarations of code chunks: link targets for chunks that use those names.
SELECT symbol, kind, doc_id, chunk_id FROM {chunks} WHERE symbol IS NOT NULL AND symbol <> '';

-- name: fetch_fusion_rows
-- What fusion reads of every candidate (core.store.contract.FUSION_COLUMNS): the fields its
-- boosts and demotion look at, the text_key it deduplicates by and the doc_id the adaptive
-- rule counts documents by; no text.
SELECT chunk_id, symbol, framework_tags, deprecated, deprecated_in_int, metadata, text_key, doc_id
FROM {chunks}
WHERE chunk_id IN ({chunk_ids});

-- name: fetch_chunks
SELECT
    chunk_id, doc_id, chunk_index, content, context, chunk_type, language, source, domain,
    token_count, content_hash, path, title, url, symbol, kind, start_line, end_line,
    ios_version_min, ios_version_max, ios_version_min_int, ios_version_max_int,
    swift_version, swift_version_int, deprecated, deprecated_in, deprecated_in_int,
    platforms, framework_tags, imports, attributes, last_verified, metadata
FROM {chunks}
WHERE chunk_id IN ({chunk_ids});

-- name: sample_chunk_ids
-- Chunk ids spread over the index by content hash (a pseudo-random order that does not
-- depend on load order): the same sample while the chunks stay the same.
SELECT chunk_id FROM {chunks} ORDER BY content_hash, chunk_id LIMIT %(limit)s;
