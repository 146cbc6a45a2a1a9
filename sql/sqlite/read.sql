-- The read path: what is indexed, keyword search, vectors, chunk rows.

-- name: document_states
SELECT doc_id, content_hash, mtime, source_path, last_verified FROM documents;

-- name: bm25_search
-- BM25 over the analysed text with the metadata filter of index.filters.SearchFilter.admits.
-- Every predicate mirrors one rule there, NULLs included; list parameters are JSON arrays
-- (NULL = no restriction), so the statement text never changes with the filter.
SELECT c.chunk_id, bm25(chunks_fts) AS rank, c.text_key, c.doc_id
FROM chunks_fts
JOIN chunks AS c ON c.id = chunks_fts.rowid
WHERE chunks_fts MATCH :match
  AND (:sources IS NULL
       OR coalesce(c.source IN (SELECT value FROM json_each(:sources)), 0))
  AND (:domains IS NULL
       OR coalesce(c.domain IN (SELECT value FROM json_each(:domains)), 0)
       OR (:include_user_codebase AND coalesce(c.source = :user_codebase, 0)))
  AND (:include_user_codebase OR c.source IS NULL OR c.source <> :user_codebase)
  AND (:target IS NULL
       OR ((c.ios_version_min_int IS NULL OR c.ios_version_min_int <= :target)
           AND (c.ios_version_max_int IS NULL OR c.ios_version_max_int >= :target)
           AND (:include_deprecated
                OR NOT coalesce(c.deprecated, 0)
                OR (c.deprecated_in_int IS NOT NULL AND c.deprecated_in_int > :target))))
  AND (:frameworks IS NULL
       OR EXISTS (SELECT 1 FROM json_each(c.framework_tags) AS t
                  WHERE t.value IN (SELECT value FROM json_each(:frameworks))))
  AND (:cutoff IS NULL
       OR c.last_verified IS NULL
       OR substr(c.last_verified, 1, 10) >= :cutoff)
ORDER BY rank, c.chunk_id
LIMIT :k;

-- name: vector_count
-- How many vectors vector_rows will return at most: the matrix is allocated once, then filled.
SELECT count(*) FROM vectors;

-- name: vector_rows
-- Everything the in-memory vector search needs: the vector and the filterable columns; and
-- the text_key and doc_id its hits carry to fusion.
SELECT
    c.chunk_id, c.domain, c.source, c.ios_version_min_int, c.ios_version_max_int,
    c.deprecated, c.deprecated_in_int, c.framework_tags, c.last_verified, c.text_key, c.doc_id,
    v.embedding
FROM chunks AS c
JOIN vectors AS v ON v.chunk_id = c.chunk_id
ORDER BY c.id;

-- name: keyword_rows
-- Everything the in-memory keyword search needs (core/store/sqlite/keyword.py): the
-- filterable columns, the text_key and the doc_id, as in vector_rows, and the fields FTS5's analysed
-- text is made of.
SELECT
    c.chunk_id, c.domain, c.source, c.ios_version_min_int, c.ios_version_max_int,
    c.deprecated, c.deprecated_in_int, c.framework_tags, c.last_verified, c.text_key, c.doc_id,
    c.context, c.content
FROM chunks AS c
ORDER BY c.id;

-- name: keyword_columns
-- keyword_rows without the text, for postings loaded from their saved file.
SELECT
    c.chunk_id, c.domain, c.source, c.ios_version_min_int, c.ios_version_max_int,
    c.deprecated, c.deprecated_in_int, c.framework_tags, c.last_verified, c.text_key, c.doc_id
FROM chunks AS c
ORDER BY c.id;

-- name: document_titles
-- Each titled document's first chunk: the dictionary that CoRAG's link hops match against
-- the text of retrieved chunks (query/links.py).
SELECT title, chunk_id FROM chunks
WHERE chunk_index = 0 AND title IS NOT NULL AND title <> '';

-- name: document_links
-- The links published pages state (refs of role 'link', named by the target's URL) whose
-- target is in the index: the linking chunk and its document, how the page relates to the
-- target (parent, topic, ...), the title, the target's first chunk.
SELECT r.chunk_id, r.doc_id, r.kind, r.qualifier, c.chunk_id FROM refs AS r
JOIN chunks AS c ON c.url = r.name AND c.chunk_index = 0
WHERE r.role = 'link';

-- name: chunk_symbols
-- The declarations of code chunks: link targets for chunks that use those names.
SELECT symbol, kind, doc_id, chunk_id FROM chunks WHERE symbol IS NOT NULL AND symbol <> '';

-- name: fetch_chunks
SELECT
    chunk_id, doc_id, chunk_index, content, context, chunk_type, language, source, domain,
    token_count, content_hash, path, title, url, symbol, kind, start_line, end_line,
    ios_version_min, ios_version_max, ios_version_min_int, ios_version_max_int,
    swift_version, swift_version_int, deprecated, deprecated_in, deprecated_in_int,
    platforms, framework_tags, imports, attributes, last_verified, metadata
FROM chunks
WHERE chunk_id IN (SELECT value FROM json_each(:chunk_ids));

-- name: sample_chunk_ids
-- Chunk ids spread over the index by content hash (a pseudo-random order that does not
-- depend on load order): the same sample while the chunks stay the same.
SELECT chunk_id FROM chunks ORDER BY content_hash, chunk_id LIMIT :limit;

-- name: fetch_fusion_rows
-- What fusion reads of every candidate (core.store.contract.FUSION_COLUMNS): the fields its
-- boosts and demotion look at, the text_key it deduplicates by and the doc_id the adaptive
-- rule counts documents by; no text.
SELECT chunk_id, symbol, framework_tags, deprecated, deprecated_in_int, metadata, text_key, doc_id
FROM chunks
WHERE chunk_id IN (SELECT value FROM json_each(:chunk_ids));

-- name: chunks_without_vector
-- Which of these chunks have no vector yet: a query's fusion counts their BM25 standing for
-- the vector leg (query/retrieval/fusion.py). A probe of each key, as pending_vector_rows.
SELECT c.chunk_id
FROM chunks AS c
WHERE c.chunk_id IN (SELECT value FROM json_each(:chunk_ids))
  AND NOT EXISTS (SELECT 1 FROM vectors AS v WHERE v.chunk_id = c.chunk_id);

-- name: pending_vector_rows
-- Chunks without a vector (loaded by the lexical phase, not yet embedded), in chunk_id order
-- after :after: the vector phase pages through them (loaders/vectors.py). chunk_id is UNIQUE,
-- so each page is an index range scan and a probe of the vectors' primary key per row.
SELECT c.chunk_id, c.doc_id, c.content_hash, c.context, c.content, c.language
FROM chunks AS c
WHERE c.chunk_id > :after
  AND NOT EXISTS (SELECT 1 FROM vectors AS v WHERE v.chunk_id = c.chunk_id)
ORDER BY c.chunk_id
LIMIT :limit;

-- name: shard_states
-- The ledger's state of these shards ('done' or 'failed'); shards never recorded are left out.
SELECT shard_id, state
FROM vector_shards
WHERE shard_id IN (SELECT value FROM json_each(:shard_ids));
