"""Code navigation: where a symbol is defined, where it is used, what calls what, read from the
references table the ingest writes with the chunks (core.store.contract.REFERENCE_SCHEMA)."""
