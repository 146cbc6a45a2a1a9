-- A document's source file was read completely and every record of it is in the index.
UPDATE documents SET mtime = :mtime WHERE doc_id = :doc_id;
