"""The stages of an ingest run as plain functions, and how a runner runs them.

`loaders.ingest` calls each stage through a `StageRunner`: `run_directly` here, a Prefect
task per stage in `flows.ingest_flow`, so every caller runs the same code.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

import numpy as np
import pyarrow as pa

from chunkers.model import Document
from chunkers.parallel import ChunkSizes, chunk_documents
from chunkers.pipeline import ChunkedDocument
from chunkers.sources.discovery import SourceFile, discover
from chunkers.sources.reading import Defaults, ReadResult, read_all
from core.progress import Progress
from core.store.contract import IndexStore, LoadResult
from loaders.hold import HoldPoints
from loaders.load import load

T = TypeVar("T")
_LOG = logging.getLogger("rag.ingest")


class StageRunner(Protocol):
    def __call__(self, name: str, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T: ...


def run_directly(name: str, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    return fn(*args, **kwargs)


# -- stages: plain functions; a runner may wrap each (Prefect tasks) ----------------------


def discover_stage(
    paths: list[str], secrets: bool = False, within: tuple[str, ...] = ()
) -> tuple[list[SourceFile], dict[str, int]]:
    """The files to read, and how many of the others were skipped, by type (credentials by
    name, unless `secrets`; with `within`, files outside those roots)."""
    skipped: Counter[str] = Counter()
    return discover(paths, skipped, secrets=secrets, within=within), dict(skipped)


def read_stage(to_read: list[SourceFile], defaults: Defaults) -> ReadResult:
    return read_all(to_read, defaults)


def chunk_stage(
    documents: list[Document],
    sizes: ChunkSizes,
    holds: HoldPoints | None = None,
) -> list[ChunkedDocument]:
    """Chunks of the documents, with no model: transcripts are cut by lexical cohesion
    (chunkers/prose/transcript.py), so the keyword index never waits for an embedder."""
    progress = Progress(len(documents), "chunk documents", log=_LOG)

    def advance(done: int) -> None:
        progress.advance(done)
        if holds is not None:
            holds.advance("chunk", done)

    results = chunk_documents(documents, sizes, on_progress=advance)
    progress.done()
    for result in results:
        for warning in result.warnings:
            _LOG.warning(warning)
    return results


def load_stage(
    index: IndexStore,
    documents: pa.Table,
    chunks: pa.Table,
    vectors: np.ndarray | None,
    deleted: list[str],
    docs_per_batch: int,
    holds: HoldPoints | None = None,
    stamp_mtimes: dict[str, float] | None = None,
    references: pa.Table | None = None,
) -> LoadResult:
    progress = Progress(len(chunks), "load chunks", log=_LOG)
    seen = [0]

    def report(done: int, total: int) -> None:
        progress.advance(done - seen[0])
        seen[0] = done

    result = load(
        index,
        documents,
        chunks,
        vectors,
        deleted,
        docs_per_batch=docs_per_batch,
        on_batch=report,
        before_batch=(lambda number: holds.reached("load", number)) if holds else None,
        stamp_mtimes=stamp_mtimes,
        references=references,
    )
    progress.done()
    return result
