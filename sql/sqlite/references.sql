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
SELECT r.chunk_id, r.doc_id, r.name, r.role, r.kind, r.line, r.end_line, r.scope,
       r.qualifier, c.path
FROM refs AS r JOIN chunks AS c ON c.chunk_id = r.chunk_id
WHERE c.path = :path
ORDER BY r.line;
