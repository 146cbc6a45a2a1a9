"""One ingest run's stages, sharing its settings, summary, stage runner, hold points and
model: `loaders.ingest` builds one per command (ingest, ingest_documents, embed)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

import pyarrow as pa

from chunkers.model import Document, Reject
from chunkers.parallel import ChunkSizes
from chunkers.pipeline import ChunkedDocument, reject_of, screen
from chunkers.sources.discovery import SourceFile
from chunkers.sources.reading import Defaults
from core.embedding.base import Embedder
from core.embedding.cache import EmbeddingCache
from core.embedding.model_files import tokenizer_source
from core.embedding.models import model_spec
from core.embedding.precision import precision_label, shares_index_with
from core.embedding.runtimes import load_embedder
from core.settings import Settings
from core.store.contract import IndexStore, LoadBatch, StoreError
from core.store.coverage import coverage
from loaders.arrow_tables import chunks_to_table, documents_to_table, references_to_table
from loaders.changes import ChangeSet, Scope, detect_changes, file_stamps, plan_reads
from loaders.executors import ShardExecutor, executor_for
from loaders.hold import HoldPoints
from loaders.load import document_rows
from loaders.preflight import (
    hold_points,
)
from loaders.sharded import embed_sharded, shards_summary
from loaders.stages import (
    StageRunner,
    chunk_stage,
    discover_stage,
    load_stage,
    read_stage,
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
from loaders.vectors import embed_pending, pending_count, unusable_reason


class IngestRun:
    """The stages of one run, sharing its settings, summary, runner and hold points."""

    def __init__(
        self,
        settings: Settings,
        summary: IngestSummary,
        run_stage: StageRunner,
        holds: HoldPoints,
        docs_per_batch: int | None,
        runs: Path,
    ) -> None:
        self.settings = settings
        self.summary = summary
        self.stage = run_stage
        self.holds = holds
        self.docs_per_batch = docs_per_batch or settings.load_batch_docs
        self.file_of: dict[str, str | None] = {}  # doc_id -> source file, of documents read
        self.origins: dict[str, Document] = {}  # doc_id -> the document, of those processed
        self.embedder: Embedder | None = None  # None: the settings' model
        self.rejects: list[Reject] = []
        self.runs = runs
        # Where the vector phase runs (loaders/executors/): None is this process. The store
        # as the command named it, for workers that write to it themselves.
        self.executor: ShardExecutor | None = None
        self.store: str | None = None

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

    @classmethod
    def of(
        cls,
        settings: Settings,
        summary: IngestSummary,
        target: IngestTarget,
        run_stage: StageRunner,
        holds: HoldPoints | None,
        embedder: Embedder | None,
        docs_per_batch: int | None = None,
    ) -> IngestRun:
        """The run of a command on `target` (holds: RAG_HOLD_AT's unless given)."""
        run = cls(
            settings,
            summary,
            run_stage,
            holds or hold_points(settings),
            docs_per_batch,
            runs_dir(settings, target.store),
        )
        run.embedder = embedder
        run.store = target.store
        run.executor = executor_for(settings)
        return run

    def record_rejects(self) -> None:
        summary = self.summary
        summary.rejects = [r.to_dict() for r in self.rejects]
        summary.docs_rejected = len(self.rejects)
        if self.rejects:
            summary.rejects_file = str(write_rejects(self.runs, summary.index, self.rejects))

    def process(
        self,
        target: IndexStore,
        changes: ChangeSet,
        stamps: dict[str, float],
        *,
        bind_model: bool = True,
    ) -> None:
        """The lexical phase: chunk and load what changed, without vectors, so that the
        corpus answers keyword and symbol questions as soon as it ends; record the rejects.
        With `bind_model`, the model is loaded and bound to the index first, refusing another
        model's index before any work; without (`--vectors later`), no model is loaded at
        all: the vector phase binds it when it runs."""
        summary, settings = self.summary, self.settings
        self.origins = {d.doc_id: d for d in changes.to_process}
        if not changes.to_process:
            self.record_rejects()
            # Whatever a killed run staged is in the index by now, or no longer wanted.
            Staging(settings.staging_dir, summary.index, {}).clear()
            if changes.deleted_ids or stamps:
                with Stage(summary, "load"):
                    result = target.apply(empty_batch(changes.deleted_ids, stamp_mtimes=stamps))
                summary.chunks_deleted = result.chunks_deleted
            return
        embedder = self._embedder(target) if bind_model else None
        sizes = ChunkSizes.from_settings(settings, self._tokenizer_model())
        # Chunks are reused only by a run of the same sizes (the tokenizer's among them) and
        # chunk format (5: no model takes part in chunking, so none is in the key).
        staging = Staging(
            settings.staging_dir, summary.index, {"sizes": asdict(sizes), "format": 5}
        )
        with Stage(summary, "chunk"):
            documents, chunks, refs, rejected = self._chunked(changes, sizes, staging)
        self.rejects.extend(reject for _, reject in rejected)
        self.record_rejects()
        summary.chunks_by_language = by_count(Counter(chunks.column("language").to_pylist()))
        if rejected:
            # Their files are not complete in the index: read (and report) them again next run.
            incomplete = {doc.source_file for doc, _ in rejected}
            stamps = {d: m for d, m in stamps.items() if self.file_of.get(d) not in incomplete}
        with Stage(summary, "load"):
            result = self.stage(
                "load",
                load_stage,
                target,
                documents,
                chunks,
                None,
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
        if embedder is not None:
            summary.notes.extend(embedder.notes)

    def vectors(self, target: IndexStore, interrupted: Callable[[], bool] | None = None) -> None:
        """The vector phase: embed every chunk of the index still without a vector (this
        run's, and any a killed or `--vectors later` run left), a page per commit."""
        summary = self.summary
        pending, chunks = pending_count(target)
        if pending:
            embedder = self._embedder(target)
            if self.executor is not None:
                # Not a stage: its shards are the task runs (a task's context, with the
                # index among its inputs, would travel to every worker with them).
                with (
                    Stage(summary, "embed"),
                    EmbeddingCache(self.settings.embedding_cache_file) as cache,
                ):
                    phase = embed_sharded(
                        target,
                        embedder,
                        self.executor,
                        self.settings,
                        self.store,
                        self.holds,
                        cache,
                    )
                summary.vector_shards = shards_summary(phase)
            else:
                with (
                    Stage(summary, "embed"),
                    EmbeddingCache(self.settings.embedding_cache_file) as cache,
                ):
                    phase = self.stage(
                        "embed pending",
                        embed_pending,
                        target,
                        embedder,
                        cache,
                        page_chunks=self.settings.vector_page_chunks,
                        holds=self.holds,
                        interrupted=interrupted,
                    )
            summary.chunks_embedded += phase.embedded
            summary.embedding_cache_hits += phase.cache_hits
            pending, chunks = phase.pending_after, phase.chunks
            if phase.interrupted:
                summary.vectors_paused = True
                summary.notes.append(
                    f"the vector phase paused for newer changes with {pending} chunks to go"
                )
            if phase.unusable:
                self.rejects.extend(self._unusable(target, phase.unusable))
                self.record_rejects()
        summary.chunks_pending = pending
        summary.vector_coverage = coverage(pending, chunks)

    def defer_vectors(self, target: IndexStore) -> None:
        """`--vectors later`: say what waits for the vector phase."""
        pending, chunks = pending_count(target)
        self.summary.chunks_pending = pending
        self.summary.vector_coverage = coverage(pending, chunks)
        if pending:
            self.summary.notes.append(
                f"{pending} of {chunks} chunks wait for their vectors: keyword search is "
                f"complete; run `rag-retrieve embed --index {self.summary.index}` to embed them"
            )

    def _unusable(self, target: IndexStore, unusable: dict[str, list[str]]) -> list[Reject]:
        """A reject per document with chunks the model gives no usable vector, at the
        document's origin when this run read it, else at its source file."""
        states = target.document_states()
        out = []
        for doc_id, chunk_ids in unusable.items():
            reason = unusable_reason(chunk_ids)
            origin = self.origins.get(doc_id)
            if origin is not None:
                out.append(reject_of(origin, reason))
            else:
                state = states.get(doc_id)
                out.append(Reject((state.source_path if state else None) or doc_id, None, reason))
        return out

    def _chunked(
        self,
        changes: ChangeSet,
        sizes: ChunkSizes,
        staging: Staging,
    ) -> tuple[pa.Table, pa.Table, pa.Table, list[tuple[Document, Reject]]]:
        """Documents, chunks and their references to load (reusing what a killed run
        staged), and the documents the chunk stage rejected (`screen`), which are neither
        staged nor loaded."""
        wanted = {d.doc_id: d.content_hash for d in changes.to_process}
        reused = reusable(staging.load(), wanted)
        reused_ids = set(reused.documents.column("doc_id").to_pylist()) if reused else set()
        todo = [d for d in changes.to_process if d.doc_id not in reused_ids]
        results: list[ChunkedDocument] = []
        if todo:
            results = self.stage("chunk", chunk_stage, todo, sizes, self.holds)
        results, rejected = screen(results, self.settings.max_chunks_per_document)
        documents = documents_to_table(document_rows([r.document for r in results]))
        chunks = chunks_to_table([c for r in results for c in r.chunks])
        refs = references_to_table([c for r in results for c in r.chunks])
        if reused is not None:
            documents = pa.concat_tables([reused.documents, documents])
            chunks = pa.concat_tables([reused.chunks, chunks])
            refs = pa.concat_tables([reused.references, refs])
        if results or reused is None:
            staging.save_chunks(documents, chunks, refs)
        return documents, chunks, refs, rejected

    def _embedder(self, target: IndexStore) -> Embedder:
        embedder = self.embedder = self.embedder or load_embedder(self.settings)
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
        source = tokenizer_source(self.settings)
        if source.note:
            self.summary.notes.append(source.note)
        return str(source.directory)


def empty_batch(
    deleted_ids: list[str], *, stamp_mtimes: dict[str, float] | None = None
) -> LoadBatch:
    return LoadBatch(
        documents=documents_to_table([]),
        chunks=chunks_to_table([]),
        vectors=None,
        delete_doc_ids=deleted_ids,
        stamp_mtimes=dict(stamp_mtimes or {}),
    )
