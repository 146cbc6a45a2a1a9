-- The references table (migrations/0004_references.sql): code navigation's rows.

-- name: insert_references!
INSERT INTO {refs} (chunk_id, doc_id, name, role, kind, line, end_line, scope, qualifier)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s);

-- name: delete_references_of_docs!
DELETE FROM {refs} WHERE doc_id IN ({doc_ids});

-- name: references_named
SELECT r.chunk_id, r.doc_id, r.name, r.role, r.kind, r.line, r.end_line, r.scope,
       r.qualifier, c.path
FROM {refs} AS r JOIN {chunks} AS c ON c.chunk_id = r.chunk_id
WHERE r.name IN ({names})
ORDER BY c.path, r.line;

-- name: references_in_path
-- The file's chunks by path (path_idx), then their rows by document.
SELECT r.chunk_id, r.doc_id, r.name, r.role, r.kind, r.line, r.end_line, r.scope,
       r.qualifier, c.path
FROM {chunks} AS c JOIN {refs} AS r ON r.doc_id = c.doc_id AND r.chunk_id = c.chunk_id
WHERE c.path = %(path)s
ORDER BY r.line;

-- name: imports_of_docs
-- What each of the documents imports, through doc_role_scope_idx.
SELECT doc_id, name FROM {refs}
WHERE doc_id IN ({doc_ids}) AND role = 'import'
ORDER BY doc_id, line;

-- name: calls_in_scopes
-- The calls and messages made inside declarations ({scopes}: (doc_id, qualified name)
-- pairs), through doc_role_scope_idx.
SELECT r.chunk_id, r.doc_id, r.name, r.role, r.kind, r.line, r.end_line, r.scope,
       r.qualifier, c.path
FROM {refs} AS r JOIN {chunks} AS c ON c.chunk_id = r.chunk_id
WHERE (r.doc_id, r.scope) IN ({scopes}) AND r.role IN ('call', 'send')
ORDER BY c.path, r.line;

-- name: definitions_named
-- The declarations of these names, not their uses: name_role_idx.
SELECT r.chunk_id, r.doc_id, r.name, r.role, r.kind, r.line, r.end_line, r.scope,
       r.qualifier, c.path
FROM {refs} AS r JOIN {chunks} AS c ON c.chunk_id = r.chunk_id
WHERE r.name IN ({names}) AND r.role = 'definition'
ORDER BY c.path, r.line;
