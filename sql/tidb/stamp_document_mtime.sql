-- A document's source file was read completely and every record of it is in the index.
UPDATE {documents} SET mtime = %(mtime)s WHERE doc_id = %(doc_id)s;
