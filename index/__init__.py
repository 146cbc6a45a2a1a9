"""What the ingestion side and the query side of rag-retrieve share.

Settings, the embedding model's tokenizer, version encoding, the text analyzer and
the index stores live here so that the writer and the reader of an index can never
disagree about them.
"""
