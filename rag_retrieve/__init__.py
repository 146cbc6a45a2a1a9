"""The `rag-retrieve` command: one entry point, installed once, for every part of the tool."""
