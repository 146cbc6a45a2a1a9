-- The references table (migrations/0008_references.sql): code navigation's rows.

-- name: insert_reference!
-- Positional parameters: every REFERENCE_SCHEMA column in its order.
INSERT INTO refs (chunk_id, doc_id, name, role, kind, line, end_line, scope, qualifier)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?);

-- name: delete_references_of_docs!
DELETE FROM refs WHERE doc_id IN (SELECT value FROM json_each(:doc_ids));

-- name: references_named
SELECT r.chunk_id, r.doc_id, r.name, r.role, r.kind, r.line, r.end_line, r.scope,
       r.qualifier, c.path
FROM refs AS r JOIN chunks AS c ON c.chunk_id = r.chunk_id
WHERE r.name IN (SELECT value FROM json_each(:names))
ORDER BY c.path, r.line;

-- name: references_in_path
-- The file's chunks by path (chunks_path), then their rows by document (refs_doc).
SELECT r.chunk_id, r.doc_id, r.name, r.role, r.kind, r.line, r.end_line, r.scope,
       r.qualifier, c.path
FROM chunks AS c JOIN refs AS r ON r.doc_id = c.doc_id AND r.chunk_id = c.chunk_id
WHERE c.path = :path
ORDER BY r.line;

-- name: imports_of_docs
-- What each of the documents imports (:doc_ids a JSON array), through refs_imports.
SELECT doc_id, name FROM refs
WHERE doc_id IN (SELECT value FROM json_each(:doc_ids)) AND role = 'import'
ORDER BY doc_id, line;

-- name: calls_in_scopes
-- The calls and messages made inside declarations (:scopes a JSON array of [doc_id, the
-- declaration's qualified name]), through refs_calls.
SELECT r.chunk_id, r.doc_id, r.name, r.role, r.kind, r.line, r.end_line, r.scope,
       r.qualifier, c.path
FROM json_each(:scopes) AS s
JOIN refs AS r
  ON r.doc_id = json_extract(s.value, '$[0]') AND r.scope = json_extract(s.value, '$[1]')
JOIN chunks AS c ON c.chunk_id = r.chunk_id
WHERE r.role IN ('call', 'send')
ORDER BY c.path, r.line;

-- name: definitions_named
-- The declarations of these names (:names a JSON array), not their uses: refs_definitions.
SELECT r.chunk_id, r.doc_id, r.name, r.role, r.kind, r.line, r.end_line, r.scope,
       r.qualifier, c.path
FROM refs AS r JOIN chunks AS c ON c.chunk_id = r.chunk_id
WHERE r.name IN (SELECT value FROM json_each(:names)) AND r.role = 'definition'
ORDER BY c.path, r.line;
