LOAD DATA LOCAL INFILE %(path)s INTO TABLE {postings}
CHARACTER SET utf8mb4
FIELDS TERMINATED BY '\t' ESCAPED BY '\\'
LINES TERMINATED BY '\n'
(term, chunk_id, doc_id, tf, doc_len);
