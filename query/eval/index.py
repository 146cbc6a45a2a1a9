"""The throwaway index an evaluation searches: every corpus record one document (or, for a
set that judges a directory, every file read as a directory ingest reads it), chunked,
embedded and loaded by the same ingestion code as every other index. The one module of the
query side that imports ingestion (.importlinter names it)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from typing import Any

from chunkers.code.python import parse_python
from chunkers.model import Document
from chunkers.sources.discovery import discover
from chunkers.sources.reading import Defaults, read_all
from core.settings import Settings
from core.store.contract import IndexStore
from loaders.ingest import ingest_documents
from query.eval.beir import BeirData

SOURCE = "beir"


def looks_like_python(text: str) -> bool:
    """Function or class source (CoSQA): give it to the Python chunker, as ingest would a
    .py file; anything else is prose."""
    if not text.lstrip().startswith(("def ", "async def ", "class ", "@")):
        return False
    try:
        parse_python(text)
    except (SyntaxError, ValueError):
        return False
    return True


def to_document(doc_id: str, title: str, text: str) -> Document:
    language = "python" if looks_like_python(text) else "markdown"
    body = text if text.strip() else title
    return Document(
        doc_id=doc_id,
        text=body,
        source=SOURCE,
        domain="python" if language == "python" else "general",
        language=language,
        content_hash=hashlib.sha256(f"{title}\x1f{body}".encode()).hexdigest(),
        origin=f"corpus.jsonl#{doc_id}",
        # The BEIR id travels as the chunk's path: results name their document by it.
        path=doc_id,
        title=title or None,
    )


def index_name(dataset: str) -> str:
    return "eval-" + (re.sub(r"[^a-z0-9_-]+", "-", dataset.lower()).strip("-") or "data")


def build_index(
    data: BeirData, index: IndexStore, settings: Settings, embedder: Any, log: Callable
) -> dict[str, Any]:
    """Chunk, embed (through the cache) and load the documents that are new or changed,
    with the same ingestion code as every other index (`loaders.ingest`)."""
    rejected = 0
    if data.corpus_dir is not None:
        read = read_all(
            discover([data.corpus_dir]),
            Defaults(source=SOURCE, max_document_bytes=settings.max_document_bytes),
        )
        docs, rejected = read.documents, len(read.rejects)
        for reject in read.rejects[:5]:
            log(f"rejected: {reject}")
        paths = {doc.path for doc in docs}
        unknown = sorted({d for judged in data.qrels.values() for d in judged} - paths)
        if unknown:
            log(f"warning: {len(unknown)} judged file(s) not in {data.corpus_dir}: {unknown[:3]}")
    else:
        docs = [to_document(d, t, x) for d, (t, x) in data.corpus.items()]
    summary = ingest_documents(docs, index, settings, embedder=embedder)
    return {
        "documents": len(docs),
        "rejected": rejected,
        "reused": summary.docs_unchanged,
        "chunks": index.stats().get("chunks"),
        "embedded": summary.chunks_embedded,
        "cache_hits": summary.embedding_cache_hits,
    }
