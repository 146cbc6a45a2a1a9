"""What ingestion and the query side share, so that the writer and the reader of an index
can never disagree: settings, the tokenizer, version encoding, progress reporting, the
embedding runtimes (`embedding/`) and the index stores (`store/`)."""
