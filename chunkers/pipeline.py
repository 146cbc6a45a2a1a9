"""Document → chunks: pick the chunker for the language, tag, and give deterministic ids."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from chunkers.code.config import chunk_config
from chunkers.code.grammar_syntax import LANGUAGE_SPECS, chunk_code
from chunkers.code.python import chunk_python
from chunkers.code.swift import chunk_swift
from chunkers.config import ChunkConfig
from chunkers.model import CONFIG_LANGUAGES, KNOWN_FIELDS, Chunk, Document, Piece, Reject
from chunkers.prose.chat import chunk_chat
from chunkers.prose.front_matter import split_front_matter
from chunkers.prose.markdown import chunk_markdown
from chunkers.prose.transcript import chunk_transcript
from chunkers.published_links import place_links, timed
from chunkers.tagging.tags import Tags, chunk_type_for, document_tags, merge_tags, piece_tags
from chunkers.windows import line_windows
from core.versions import version_int


@dataclass
class ChunkedDocument:
    document: Document
    chunks: list[Chunk]
    warnings: list[str] = field(default_factory=list)


def screen(
    results: list[ChunkedDocument], max_chunks: int
) -> tuple[list[ChunkedDocument], list[tuple[Document, Reject]]]:
    """The chunked documents fit to index, and a reject for each one that is not: a document
    that yields no chunk would be registered yet unfindable; one that yields more than
    `max_chunks` is a generated dump or a pathological page whose embedding would cost more
    than the rest of the corpus."""
    kept: list[ChunkedDocument] = []
    rejected: list[tuple[Document, Reject]] = []
    for result in results:
        doc, count = result.document, len(result.chunks)
        if count == 0:
            reason = "no text to index: the document yields no chunk"
        elif count > max_chunks:
            reason = (
                f"yields {count} chunks, over the limit of {max_chunks} per document "
                "(RAG_MAX_CHUNKS_PER_DOCUMENT): split it, or raise the limit"
            )
        else:
            kept.append(result)
            continue
        rejected.append((doc, reject_of(doc, reason)))
    return kept, rejected


def reject_of(doc: Document, reason: str) -> Reject:
    """A reject at the document's origin ("file:line" for a JSONL record, else the file)."""
    file, _, line = doc.origin.rpartition(":")
    if file and line.isdigit():
        return Reject(file, int(line), reason)
    return Reject(doc.origin, None, reason)


def chunk_document(doc: Document, cfg: ChunkConfig) -> ChunkedDocument:
    """Chunk and tag one document. Never raises on content: a chunker that fails falls back
    to line windows and the failure becomes a warning."""
    warnings: list[str] = []
    fields = dict(doc.fields)
    metadata = dict(doc.metadata)
    try:
        pieces = _pieces_for(doc, cfg, fields, metadata, warnings)
    except Exception as exc:  # a chunker bug must cost one document's structure, not the run
        warnings.append(f"{doc.origin}: {doc.language} chunker failed ({exc!r}); chunked by lines")
        pieces = [
            Piece(w.text, start_line=w.start_line, end_line=w.end_line, kind="window")
            for w in line_windows(doc.text, cfg)
        ]
    if not any(p.content.strip() for p in pieces) and doc.text.strip():
        # Text the chunker found no unit in (a page of headings only, a file of comments):
        # indexed as it stands rather than registered with no chunk to find it by.
        pieces = [
            Piece(w.text, start_line=w.start_line, end_line=w.end_line, kind="window")
            for w in line_windows(doc.text, cfg)
        ]
    doc_tags = document_tags(fields, doc.text, language=doc.language, source=doc.source)
    pieces = [p for p in pieces if p.content.strip()]
    if doc.line_times:
        pieces = [timed(doc, piece) for piece in pieces]
    if doc.links:
        place_links(doc.links, pieces)
    chunks = [
        _make_chunk(doc, index, piece, doc_tags, cfg, fields, metadata)
        for index, piece in enumerate(pieces)
    ]
    return ChunkedDocument(doc, chunks, warnings)


def _pieces_for(
    doc: Document,
    cfg: ChunkConfig,
    fields: dict[str, Any],
    metadata: dict[str, Any],
    warnings: list[str],
) -> list[Piece]:
    if doc.messages is not None:
        return chunk_chat(doc.messages, cfg)
    if doc.language == "swift":
        return chunk_swift(doc.text, cfg)
    if doc.language in LANGUAGE_SPECS:
        return chunk_code(doc.text, cfg, doc.language)
    if doc.language in CONFIG_LANGUAGES:
        return chunk_config(doc.text, cfg, path=doc.path or doc.title or doc.doc_id)
    if doc.language == "python":
        pieces, found = chunk_python(doc.text, cfg, origin=doc.origin)
        warnings.extend(found)
        return pieces
    if doc.language == "markdown":
        front, _, _ = split_front_matter(doc.text)
        for key, value in front.items():
            # Front matter describes the document: known keys act as fields unless the record
            # already set them; the rest is metadata.
            if key in KNOWN_FIELDS:
                fields.setdefault(key, value)
            else:
                metadata.setdefault(key, value)
        # A published page's breadcrumb (`SwiftUI › View`) is the context its chunks carry.
        title = metadata.get("breadcrumb") or doc.title or fields.get("title")
        return chunk_markdown(doc.text, cfg, title=title)
    return chunk_transcript(doc.text, cfg)


def _make_chunk(
    doc: Document,
    index: int,
    piece: Piece,
    doc_tags: Tags,
    cfg: ChunkConfig,
    fields: dict[str, Any],
    metadata: dict[str, Any],
) -> Chunk:
    tags = merge_tags(
        doc_tags,
        piece_tags(
            piece.content,
            language=doc.language,
            imports=piece.imports,
            attributes=piece.attributes,
            member_part=piece.symbol is not None and "part" in piece.metadata,
        ),
    )
    ios = tags.platforms.get("ios", {})
    ios_min, ios_max = ios.get("min"), ios.get("max")
    chunk_meta = {**metadata, **piece.metadata}
    last_verified = fields.get("last_verified")
    return Chunk(
        chunk_id=chunk_id(doc.doc_id, index, piece.content),
        doc_id=doc.doc_id,
        chunk_index=index,
        content=piece.content,
        context=piece.context or (doc.title or "" if doc.line_times else ""),
        chunk_type=chunk_type_for(doc.language, doc.source, piece.kind),
        language=doc.language,
        source=doc.source,
        domain=doc.domain,
        token_count=cfg.count(piece.content),
        content_hash=hashlib.sha256(f"{piece.context}\x1f{piece.content}".encode()).hexdigest(),
        path=doc.path,
        title=doc.title or fields.get("title"),
        url=piece.metadata.get("url") or doc.url,
        symbol=piece.symbol,
        kind=piece.kind,
        start_line=piece.start_line,
        end_line=piece.end_line,
        ios_version_min=ios_min,
        ios_version_max=ios_max,
        ios_version_min_int=version_int(ios_min),
        ios_version_max_int=version_int(ios_max),
        swift_version=tags.swift_version,
        swift_version_int=version_int(tags.swift_version),
        deprecated=tags.deprecated,
        deprecated_in=tags.deprecated_in,
        deprecated_in_int=version_int(tags.deprecated_in),
        platforms=tags.platforms,
        framework_tags=list(tags.frameworks),
        imports=list(piece.imports),
        attributes=list(piece.attributes),
        last_verified=str(last_verified)[:10] if last_verified else None,
        metadata=json.loads(json.dumps(chunk_meta, default=str)),
        references=piece.references,
    )


def chunk_id(doc_id: str, index: int, content: str) -> str:
    """Same document, position and text → same id, so re-ingestion can diff chunk sets."""
    digest = hashlib.sha256(f"{doc_id}\x1f{index}\x1f{content}".encode()).hexdigest()
    return digest[:32]
