"""The one ingestion function: discover → read → plan → chunk and tag → embed → load.

`ingest(paths, settings, target, ...)` ingests files, directories and globs into one index,
incrementally; `ingest_documents(documents, index, settings, ...)` does the same for
documents already in memory (the evaluation's corpora). Both run the stages below through a
`StageRunner`: called directly here, wrapped as Prefect tasks by `flows.ingest_flow`, so the
Prefect flows, `query.eval` and the benchmarks all run exactly this code.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pyarrow as pa

from chunkers.embedding_text import embedding_text
from chunkers.model import Document, Reject
from chunkers.parallel import ChunkSizes
from chunkers.pipeline import ChunkedDocument, screen
from chunkers.sources.discovery import SourceFile
from chunkers.sources.reading import Defaults
from core.embedding.base import Embedder, EmbeddingError
from core.embedding.cache import EmbeddingCache, EmbeddingCacheError, vector_identity
from core.embedding.models import ModelNotFound, model_spec
from core.embedding.precision import precision_label, shares_index_with
from core.embedding.runtimes import load_embedder
from core.settings import Settings, default_model_dir
from core.store.contract import IndexStore, LoadBatch, StoreError
from loaders.arrow_tables import chunks_to_table, documents_to_table, references_to_table
from loaders.changes import ChangeSet, Scope, detect_changes, file_stamps, plan_reads
from loaders.hold import HoldPoints
from loaders.load import document_rows
from loaders.preflight import check_domain, check_model, close_target, hold_points, open_target
from loaders.stages import (
    StageRunner,
    chunk_stage,
    discover_stage,
    embed_stage,
    load_stage,
    read_stage,
    run_directly,
)
from loaders.staging import Staging, reusable
from loaders.summary import (
    IngestError,
    IngestSummary,
    Stage,
    by_count,
    runs_dir,
    write_rejects,
)
from loaders.target import IngestTarget
from loaders.vector_screen import screen_vectors


def ingest(
    paths: list[str],
    settings: Settings,
    target: IngestTarget,
    *,
    select: Callable[[SourceFile], bool] | None = None,
    docs_per_batch: int | None = None,
    holds: HoldPoints | None = None,
    run_stage: StageRunner = run_directly,
    embedder: Embedder | None = None,
) -> IngestSummary:
    """Ingest files, directories and globs into `target`'s index, incrementally: only new
    and changed documents are chunked and embedded, vanished ones are pruned, unchanged ones
    cost a stat or a hash. `select(source_file)` keeps only some of the discovered files (a
    backfill); documents of the others stay as they are. Each batch of `docs_per_batch`
    whole documents (default settings.load_batch_docs) is one transaction. `holds` are the
    run's hold points (default: RAG_HOLD_AT's). `embedder` is the settings' model already
    loaded (a watcher's runs share one); None loads it when needed."""
    started = time.perf_counter()
    summary = IngestSummary(index=target.index)
    check_domain(target.domain)
    check_model(settings)
    run = _Run(settings, summary, run_stage, holds or hold_points(settings), docs_per_batch)
    run.embedder = embedder
    defaults = Defaults(
        target.source, target.domain, max_document_bytes=settings.max_document_bytes
    )
    the_store, index, created = open_target(settings, target.store, target.index)
    summary.store = the_store.location
    try:
        with _errors():
            changes, stamps, rejects = run.plan_files(
                paths, index, defaults, target.force, select, target.within
            )
            run.process(index, changes, stamps, rejects, runs_dir(settings, target.store))
    except BaseException:
        close_target(the_store, index, target.index, created)
        raise
    index.close()
    summary.seconds = round(time.perf_counter() - started, 3)
    return summary


def ingest_documents(
    documents: list[Document],
    target: IndexStore,
    settings: Settings,
    *,
    prune: bool = True,
    embedder: Embedder | None = None,
    run_stage: StageRunner = run_directly,
) -> IngestSummary:
    """Ingest documents already in memory into an open index: new and changed ones (by
    content hash) are chunked, embedded (by `embedder`, default the settings' model) and
    loaded; with `prune`, indexed documents not among them are deleted. The index stays
    open (the caller's)."""
    started = time.perf_counter()
    summary = IngestSummary(index=target.name)
    run = _Run(settings, summary, run_stage, HoldPoints(), None)
    run.embedder = embedder
    states = target.document_states()
    changes = detect_changes(documents, states, Scope([]))
    if prune:
        wanted = {d.doc_id for d in documents}
        changes.deleted_ids = sorted(d for d in states if d not in wanted)
    summary.docs_seen = len(documents)
    summary.docs_new, summary.docs_changed = len(changes.new), len(changes.changed)
    summary.docs_unchanged, summary.docs_deleted = (
        len(changes.unchanged_ids),
        len(changes.deleted_ids),
    )
    with _errors():
        run.process(target, changes, {}, [], settings.data_dir / "runs")
    summary.seconds = round(time.perf_counter() - started, 3)
    return summary


@contextmanager
def _errors() -> Iterator[None]:
    """Store, embedding and cache failures become one IngestError naming what failed."""
    try:
        yield
    except (StoreError, EmbeddingError, EmbeddingCacheError, ModelNotFound) as exc:
        raise IngestError(str(exc)) from exc


class _Run:
    """The stages of one run, sharing its settings, summary, runner and hold points."""

    def __init__(
        self,
        settings: Settings,
        summary: IngestSummary,
        run_stage: StageRunner,
        holds: HoldPoints,
        docs_per_batch: int | None,
    ) -> None:
        self.settings = settings
        self.summary = summary
        self.stage = run_stage
        self.holds = holds
        self.docs_per_batch = docs_per_batch or settings.load_batch_docs
        self.file_of: dict[str, str | None] = {}  # doc_id -> source file, of documents read
        self.embedder: Embedder | None = None  # None: the settings' model

    def plan_files(
        self,
        paths: list[str],
        target: IndexStore,
        defaults: Defaults,
        force: bool,
        select: Callable[[SourceFile], bool] | None,
        within: tuple[str, ...] = (),
    ) -> tuple[ChangeSet, dict[str, float], list[Reject]]:
        """What the files ask of the index: the change set, the file-complete stamps, and
        the records rejected while reading."""
        summary = self.summary
        with Stage(summary, "discover"):
            sources, skipped = self.stage(
                "discover sources", discover_stage, paths, self.settings.ingest_secrets, within
            )
            summary.skipped_by_type = by_count(skipped)
        scope = Scope(paths)
        if select is not None:
            sources = [s for s in sources if select(s)]
            # Only the selected files are this run's: the others' documents must not look vanished.
            scope = Scope([str(s.path) for s in sources])
        with Stage(summary, "read"):
            states = target.document_states()
            plan = plan_reads(sources, states, defaults, force=force)
            summary.files_read = len(plan.to_read)
            read = self.stage("read and validate", read_stage, plan.to_read, defaults)
            # Files passed over once read (a credential in the text, a link left the roots).
            summary.skipped_by_type = by_count(Counter(skipped) + read.skipped)
        incomplete = {str(Path(r.file).resolve()) for r in read.rejects}
        with Stage(summary, "detect changes"):
            changes = detect_changes(
                read.documents,
                states,
                scope,
                skipped_unchanged=plan.unchanged_ids,
                files_with_rejects=incomplete,
                force=force,
            )
            stamps = file_stamps(read.documents, states, incomplete_files=incomplete)
        summary.docs_seen = len(read.documents) + len(plan.unchanged_ids)
        summary.docs_new, summary.docs_changed = len(changes.new), len(changes.changed)
        summary.docs_unchanged = len(changes.unchanged_ids)
        summary.docs_deleted = len(changes.deleted_ids)
        self.file_of = {doc.doc_id: doc.source_file for doc in read.documents}
        return changes, stamps, list(read.rejects)

    def process(
        self,
        target: IndexStore,
        changes: ChangeSet,
        stamps: dict[str, float],
        rejects: list[Reject],
        runs: Path,
    ) -> None:
        """Chunk, embed and load what changed; record the rejects."""
        summary, settings = self.summary, self.settings

        def record_rejects() -> None:
            summary.rejects = [r.to_dict() for r in rejects]
            summary.docs_rejected = len(rejects)
            if rejects:
                summary.rejects_file = str(write_rejects(runs, summary.index, rejects))

        if not changes.to_process:
            record_rejects()
            # Whatever a killed run staged is in the index by now, or no longer wanted.
            Staging(settings.staging_dir, summary.index, {}).clear()
            if changes.deleted_ids or stamps:
                with Stage(summary, "load"):
                    result = target.apply(
                        empty_batch(changes.deleted_ids, target.dim or 0, stamp_mtimes=stamps)
                    )
                summary.chunks_deleted = result.chunks_deleted
            return
        embedder = self._embedder(target)
        sizes = ChunkSizes.from_settings(settings, self._tokenizer_model())
        staging = Staging(
            settings.staging_dir,
            summary.index,
            # Staged vectors are reused only by a run of the same model in the same precision.
            {
                "model": vector_identity(embedder.model_id, getattr(embedder, "precision", "fp32")),
                "sizes": asdict(sizes),
                "format": 2,
            },
        )
        with Stage(summary, "chunk"), EmbeddingCache(settings.embedding_cache_file) as cache:
            documents, chunks, refs, vectors, rejected = self._chunked(
                changes, sizes, embedder, staging, cache
            )
        rejects.extend(reject for _, reject in rejected)
        record_rejects()
        summary.chunks_by_language = by_count(Counter(chunks.column("language").to_pylist()))
        if rejected:
            # Their files are not complete in the index: read (and report) them again next run.
            incomplete = {doc.source_file for doc, _ in rejected}
            stamps = {d: m for d, m in stamps.items() if self.file_of.get(d) not in incomplete}
        with Stage(summary, "embed"):
            if vectors is None:
                texts = [
                    embedding_text(c, t, language)
                    for c, t, language in zip(
                        chunks.column("context").to_pylist(),
                        chunks.column("content").to_pylist(),
                        chunks.column("language").to_pylist(),
                        strict=True,
                    )
                ]
                with EmbeddingCache(settings.embedding_cache_file) as cache:
                    vectors, hits, embedded = self.stage(
                        "embed", embed_stage, texts, embedder, cache, self.holds
                    )
                summary.embedding_cache_hits, summary.chunks_embedded = hits, embedded
                staging.save_vectors(vectors)
            screened = screen_vectors(
                documents, chunks, refs, vectors, {d.doc_id: d for d in changes.to_process}
            )
        if screened.rejected:
            documents, chunks, refs, vectors = (
                screened.documents,
                screened.chunks,
                screened.references,
                screened.vectors,
            )
            rejects.extend(screened.rejected.values())
            record_rejects()
            # As for the chunk stage's rejects: their files are read and reported again.
            incomplete_files = {self.file_of.get(d) for d in screened.rejected}
            stamps = {
                d: m for d, m in stamps.items() if self.file_of.get(d) not in incomplete_files
            }
        with Stage(summary, "load"):
            result = self.stage(
                "load",
                load_stage,
                target,
                documents,
                chunks,
                vectors,
                changes.deleted_ids,
                self.docs_per_batch,
                self.holds,
                stamps,
                refs,
            )
        summary.chunks_written, summary.chunks_deleted = (
            result.chunks_written,
            result.chunks_deleted,
        )
        staging.clear()
        summary.notes.extend(getattr(embedder, "notes", []))

    def _chunked(
        self,
        changes: ChangeSet,
        sizes: ChunkSizes,
        embedder: Embedder,
        staging: Staging,
        cache: EmbeddingCache,
    ) -> tuple[pa.Table, pa.Table, pa.Table, np.ndarray | None, list[tuple[Document, Reject]]]:
        """Documents, chunks, their references and (when staged) vectors to load, and the
        documents the chunk stage rejected (`screen`), which are neither staged nor loaded."""
        wanted = {d.doc_id: d.content_hash for d in changes.to_process}
        reused = reusable(staging.load(), wanted)
        reused_ids = set(reused.documents.column("doc_id").to_pylist()) if reused else set()
        todo = [d for d in changes.to_process if d.doc_id not in reused_ids]
        results: list[ChunkedDocument] = []
        if todo:
            results = self.stage("chunk", chunk_stage, todo, sizes, embedder, cache, self.holds)
        results, rejected = screen(results, self.settings.max_chunks_per_document)
        documents = documents_to_table(document_rows([r.document for r in results]))
        chunks = chunks_to_table([c for r in results for c in r.chunks])
        refs = references_to_table([c for r in results for c in r.chunks])
        if reused is None:
            staging.save_chunks(documents, chunks, refs)
            return documents, chunks, refs, None, rejected
        if not results:
            # Everything was staged already; its vectors too if the embed stage had finished.
            return reused.documents, reused.chunks, reused.references, reused.vectors, rejected
        # Mixed: embed all rows again; the embedding cache makes the reused ones free.
        documents = pa.concat_tables([reused.documents, documents])
        chunks = pa.concat_tables([reused.chunks, chunks])
        refs = pa.concat_tables([reused.references, refs])
        staging.save_chunks(documents, chunks, refs)
        return documents, chunks, refs, None, rejected

    def _embedder(self, target: IndexStore) -> Embedder:
        embedder = self.embedder or load_embedder(self.settings)
        # Refuse before any work: vectors of two models in one index silently ruin retrieval.
        # The same for precisions: only those that held the model's quality guard share one.
        precision = getattr(embedder, "precision", "fp32")
        try:
            target.bind_model(
                embedder.model_id,
                embedder.dim,
                precision_label(precision),
                shares_with=shares_index_with(model_spec(embedder.model_id), precision),
            )
        except StoreError as exc:
            raise IngestError(str(exc)) from exc
        return embedder

    def _tokenizer_model(self) -> str:
        model = self.settings.embedding_model
        if (Path(model) / "tokenizer.json").is_file():
            return model
        self.summary.notes.append(
            f"{model} has no local tokenizer.json; chunk sizes are counted with the default "
            "model's tokenizer"
        )
        return default_model_dir()


def empty_batch(
    deleted_ids: list[str], dim: int, *, stamp_mtimes: dict[str, float] | None = None
) -> LoadBatch:
    return LoadBatch(
        documents=documents_to_table([]),
        chunks=chunks_to_table([]),
        vectors=np.zeros((0, dim), dtype=np.float32),
        delete_doc_ids=deleted_ids,
        stamp_mtimes=dict(stamp_mtimes or {}),
    )
