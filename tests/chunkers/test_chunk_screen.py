"""What the chunk stage keeps: a document that yields no chunk, or more chunks than the
per-document limit, becomes a reject naming its file and line; a page of headings only is
indexed as it stands instead of yielding nothing."""

from __future__ import annotations

from chunkers.model import Document
from chunkers.pipeline import ChunkedDocument, chunk_document, screen


def document(text: str, origin: str = "corpus.jsonl:7", language: str = "markdown") -> Document:
    return Document("doc", text, "blog", "general", language, "hash", origin)


def test_a_page_of_headings_only_is_indexed_as_it_stands(cfg):
    text = "".join(f"# Chapter {i}\n" for i in range(30))

    result = chunk_document(document(text), cfg)

    assert result.chunks
    assert "# Chapter 0" in result.chunks[0].content
    assert "# Chapter 29" in "\n".join(c.content for c in result.chunks)


def test_a_document_without_chunks_is_rejected_at_its_line(cfg):
    empty = ChunkedDocument(document("  "), [])

    kept, rejected = screen([empty], max_chunks=10)

    assert kept == []
    ((doc, reject),) = rejected
    assert (reject.file, reject.line) == ("corpus.jsonl", 7)
    assert "yields no chunk" in reject.reason


def test_a_document_over_the_chunk_limit_is_rejected_and_the_others_kept(cfg):
    big = chunk_document(document("".join(f"## S{i}\n\n{'word ' * 60}\n\n" for i in range(8))), cfg)
    small = chunk_document(document("# One\n\nShort text.", origin="notes/a.md"), cfg)

    kept, rejected = screen([big, small], max_chunks=3)

    assert kept == [small]
    ((_, reject),) = rejected
    assert "over the limit of 3 per document" in reject.reason
    assert "RAG_MAX_CHUNKS_PER_DOCUMENT" in reject.reason
