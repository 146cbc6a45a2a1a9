"""Corpus sources: discovery of files and directories, JSONL records, validation, rejects."""
