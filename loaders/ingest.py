"""The one ingestion function, in two phases. The lexical phase: discover → read → plan →
chunk and tag → load chunks, keyword index and symbol tables, with no vectors; the corpus
answers keyword and symbol questions when it ends. The vector phase (loaders/vectors.py):
embed what the index holds without a vector, committing per page.

`ingest(paths, settings, target, ...)` ingests files, directories and globs into one index,
incrementally; `ingest_documents(documents, index, settings, ...)` does the same for
documents already in memory (the evaluation's corpora); `embed(settings, target)` runs the vector phase
alone. Each builds a run (loaders/run.py) whose stages go through a
`StageRunner`: called directly here, wrapped as Prefect tasks by `flows.ingest_flow`, so the
Prefect flows, `query.eval` and the benchmarks all run exactly this code.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from chunkers.model import Document
from chunkers.sources.discovery import SourceFile
from chunkers.sources.reading import Defaults
from core.embedding.base import Embedder, EmbeddingError
from core.embedding.cache import EmbeddingCacheError
from core.embedding.models import ModelNotFound
from core.settings import Settings
from core.store.contract import IndexStore, StoreError
from loaders.changes import Scope, detect_changes
from loaders.hold import HoldPoints
from loaders.preflight import (
    check_bound_model,
    check_domain,
    check_model,
    close_target,
    open_existing,
    open_target,
)
from loaders.run import IngestRun
from loaders.stages import (
    StageRunner,
    run_directly,
)
from loaders.summary import (
    IngestError,
    IngestSummary,
)
from loaders.target import IngestTarget


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
    interrupted: Callable[[], bool] | None = None,
    vector_phase: bool = True,
) -> IngestSummary:
    """Ingest files, directories and globs into `target`'s index, incrementally: only new
    and changed documents are chunked and embedded, vanished ones are pruned, unchanged ones
    cost a stat or a hash. `select(source_file)` keeps only some of the discovered files (a
    backfill); documents of the others stay as they are. Each batch of `docs_per_batch`
    whole documents (default settings.load_batch_docs) is one transaction. `holds` are the
    run's hold points (default: RAG_HOLD_AT's). `embedder` is the settings' model already
    loaded (a watcher's runs share one); None loads it when needed. `interrupted()`, asked
    between model batches, ends the vector phase early (a watcher's next change is waiting):
    what is left stays pending for the next run. Without `vector_phase` the run ends with
    its lexical phase, and the caller runs the vector phase next (`embed`, then
    `followed_by`): the model is neither loaded nor bound here."""
    started = time.perf_counter()
    summary = IngestSummary(index=target.index)
    check_domain(target.domain)
    check_model(settings)
    run = IngestRun.of(settings, summary, target, run_stage, holds, embedder, docs_per_batch)
    defaults = Defaults(
        target.source,
        target.domain,
        max_document_bytes=settings.max_document_bytes,
        docc_base_url=target.docc_base_url or settings.docc_base_url,
    )
    the_store, index, created = open_target(settings, target.store, target.index)
    summary.store = the_store.location
    try:
        with _errors():
            changes, stamps, rejects = run.plan_files(
                paths, index, defaults, target.force, select, target.within
            )
            run.rejects.extend(rejects)
            later = target.defer_vectors or not vector_phase
            if later:
                check_bound_model(index, settings)
            # A store whose chunk rows need the model's dimension has the model bound first.
            unbound = index.model_id is None and not index.loads_before_binding
            run.process(index, changes, stamps, bind_model=not later or unbound)
            if target.defer_vectors:
                run.defer_vectors(index)
            elif vector_phase:
                run.vectors(index, interrupted)
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
    run = IngestRun(settings, summary, run_stage, HoldPoints(), None, settings.data_dir / "runs")
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
        run.process(target, changes, {})
        run.vectors(target)
    summary.seconds = round(time.perf_counter() - started, 3)
    return summary


@contextmanager
def _errors() -> Iterator[None]:
    """Store, embedding and cache failures become one IngestError naming what failed."""
    try:
        yield
    except (StoreError, EmbeddingError, EmbeddingCacheError, ModelNotFound) as exc:
        raise IngestError(str(exc)) from exc


def embed(
    settings: Settings,
    target: IngestTarget,
    *,
    holds: HoldPoints | None = None,
    run_stage: StageRunner = run_directly,
    embedder: Embedder | None = None,
    interrupted: Callable[[], bool] | None = None,
) -> IngestSummary:
    """The vector phase alone (`rag-retrieve embed`): embed every chunk of `target`'s index
    that has no vector, whatever left it so (`--vectors later`, a killed run). Safe to run at
    any time, and again: an index with nothing pending costs one count. `interrupted` as
    for `ingest`."""
    started = time.perf_counter()
    summary = IngestSummary(index=target.index)
    check_model(settings)
    run = IngestRun.of(settings, summary, target, run_stage, holds, embedder)
    the_store, index = open_existing(settings, target.store, target.index)
    summary.store = the_store.location
    try:
        with _errors():
            run.vectors(index, interrupted)
    finally:
        index.close()
    summary.seconds = round(time.perf_counter() - started, 3)
    return summary
