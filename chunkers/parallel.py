"""Chunk many documents on every core.

Code and markdown are chunked in worker processes. Transcripts are chunked in the calling
process because their topic boundaries need the embedding model, which should be loaded
once, not once per worker.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

from chunkers.config import ChunkConfig, SentenceEmbedder
from chunkers.model import Document
from chunkers.pipeline import ChunkedDocument, chunk_document
from core.embedding.model_files import tokenizer_source
from core.settings import Settings
from core.tokens import counter_for_model

# Below this many documents a process pool costs more than it saves.
MIN_DOCS_FOR_POOL = 64
DOCS_PER_TASK = 32


@dataclass(frozen=True)
class ChunkSizes:
    tokenizer_model: str
    target_tokens: int
    max_tokens: int
    overlap_tokens: int
    chat_window: int

    @classmethod
    def from_settings(cls, settings: Settings, tokenizer_model: str | None = None) -> ChunkSizes:
        """The sizes the settings ask for, counted with `tokenizer_model` (default: the
        embedding model's own tokenizer, which is fetched with the model on first use)."""
        return cls(
            tokenizer_model=tokenizer_model or str(tokenizer_source(settings).directory),
            target_tokens=settings.chunk_target_tokens,
            max_tokens=settings.chunk_max_tokens,
            overlap_tokens=settings.chunk_overlap_tokens,
            chat_window=settings.chat_window_messages,
        )

    def config(self, sentence_embedder: SentenceEmbedder | None = None) -> ChunkConfig:
        return ChunkConfig(
            counter=counter_for_model(self.tokenizer_model),
            target_tokens=self.target_tokens,
            max_tokens=self.max_tokens,
            overlap_tokens=self.overlap_tokens,
            chat_window=self.chat_window,
            sentence_embedder=sentence_embedder,
        )


def chunk_documents(
    documents: list[Document],
    sizes: ChunkSizes,
    *,
    sentence_embedder: SentenceEmbedder | None = None,
    workers: int | None = None,
    on_progress: Callable[[int], None] | None = None,
) -> list[ChunkedDocument]:
    """Chunk every document; results come back in input order."""
    local_cfg = sizes.config(sentence_embedder)
    in_process = [d for d in documents if d.language == "text"]
    pooled = [d for d in documents if d.language != "text"]
    results: dict[str, ChunkedDocument] = {}
    workers = workers or os.cpu_count() or 1
    if workers > 1 and len(pooled) >= MIN_DOCS_FOR_POOL:
        for done in _chunk_in_pool(pooled, sizes, workers):
            results.update((r.document.doc_id, r) for r in done)
            if on_progress:
                on_progress(len(done))
    else:
        in_process = documents
    for doc in in_process:
        results[doc.doc_id] = chunk_document(doc, local_cfg)
        if on_progress:
            on_progress(1)
    return [results[d.doc_id] for d in documents]


def _chunk_in_pool(
    documents: list[Document], sizes: ChunkSizes, workers: int
) -> Iterator[list[ChunkedDocument]]:
    groups = [documents[i : i + DOCS_PER_TASK] for i in range(0, len(documents), DOCS_PER_TASK)]
    # spawn, not fork: the caller may run threads (Prefect does), and fork copies their locks.
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        yield from pool.map(_chunk_group, groups, [sizes] * len(groups))


def _chunk_group(documents: list[Document], sizes: ChunkSizes) -> list[ChunkedDocument]:
    cfg = sizes.config()
    return [chunk_document(doc, cfg) for doc in documents]
