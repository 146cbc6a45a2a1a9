-- Published pages' links (refs of role 'link', chunkers/published_links.py) are read whole to
-- build the link places; their target is matched by URL to a document's first chunk.
CREATE INDEX IF NOT EXISTS refs_links ON refs (chunk_id) WHERE role = 'link';
CREATE INDEX IF NOT EXISTS chunks_url ON chunks (url) WHERE chunk_index = 0;
