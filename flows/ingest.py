"""The ingest flow: discover → read and validate → detect changes → chunk → embed → load.

`python -m flows.ingest PATH... [--index NAME] [--store DIR] [--domain D] [--source S]
[--force] [--json]` runs it in Prefect's local mode (no server needed).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
from prefect import flow, get_run_logger, task
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NO_CACHE

from chunkers.model import DOMAINS, Document, Reject
from chunkers.parallel import ChunkSizes, chunk_documents
from chunkers.pipeline import screen
from chunkers.sources.files import Defaults, SourceError, check_paths, discover, read_all
from core.embedding.base import Embedder, EmbeddingError
from core.embedding.cache import EmbeddingCache, EmbeddingCacheError, embed_with_cache
from core.embedding.models import ModelNotFound, resolve_model_dir
from core.embedding.runtimes import load_embedder
from core.progress import Progress
from core.settings import Settings, SettingsError
from core.store.contract import IndexStore, InvalidLocation, LoadBatch, Store, StoreError
from core.store.open import open_store
from flows.hold import HoldPoints
from flows.prefect_api.server import ApiServerError, temporary_api_server
from loaders.arrow_tables import chunks_to_table, documents_to_table
from loaders.changes import ChangeSet, Scope, detect_changes, file_stamps, plan_reads
from loaders.load import DOCS_PER_BATCH, document_rows, load
from loaders.staging import Staging, reusable

SUMMARY_KEYS = (
    "docs_seen",
    "docs_new",
    "docs_changed",
    "docs_unchanged",
    "docs_deleted",
    "docs_rejected",
    "chunks_written",
    "chunks_deleted",
    "chunks_embedded",
    "embedding_cache_hits",
    "seconds",
)


class IngestError(RuntimeError):
    """A run that cannot start or finish; the message names the path or setting at fault."""


class IngestUsageError(IngestError):
    """A bad argument (domain, index name, a store path that is a file): exit 2."""


@dataclass
class IngestSummary:
    docs_seen: int = 0
    docs_new: int = 0
    docs_changed: int = 0
    docs_unchanged: int = 0
    docs_deleted: int = 0
    docs_rejected: int = 0
    chunks_written: int = 0
    chunks_deleted: int = 0
    chunks_embedded: int = 0
    embedding_cache_hits: int = 0
    seconds: float = 0.0
    files_read: int = 0  # files opened this run; the others matched their recorded mtime
    index: str = ""
    store: str = ""
    rejects_file: str | None = None
    rejects: list[dict[str, Any]] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, Any]:
        return {key: getattr(self, key) for key in SUMMARY_KEYS}


@dataclass
class Stage:
    """Timing of one stage, for the summary's table."""

    summary: IngestSummary
    name: str
    started: float = 0.0

    def __enter__(self) -> Stage:
        self.started = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.summary.timings[self.name] = round(time.perf_counter() - self.started, 3)


# Resumability comes from our own Parquet staging; Prefect result caching would try (and
# fail, noisily) to hash stores and caches passed as task inputs.
@task(name="discover sources", cache_policy=NO_CACHE)
def discover_sources(paths: list[str]) -> list:
    return discover(paths)


@task(name="read and validate", cache_policy=NO_CACHE)
def read_documents(sources: list, defaults: Defaults, to_read: list) -> Any:
    return read_all(to_read, defaults)


@task(name="chunk", cache_policy=NO_CACHE)
def chunk_changed(
    changes: ChangeSet,
    sizes: ChunkSizes,
    embedder: Embedder | None,
    cache: EmbeddingCache | None = None,
    holds: HoldPoints | None = None,
) -> Any:
    logger = get_run_logger()
    progress = Progress(len(changes.to_process), "chunk documents", log=logger.info)
    sentence_embedder = None
    if embedder is not None:
        # Transcripts are split where the topic shifts, judged on embedded sentence windows:
        # the dearest part of chunking. Through the cache, re-chunking a transcript (an edit
        # elsewhere in it, --force, a rebuild) embeds only windows it has not seen.
        def sentence_embedder(texts: list[str]) -> np.ndarray:
            return embed_with_cache(embedder, cache, texts)[0]

    def advance(done: int) -> None:
        progress.advance(done)
        if holds is not None:
            holds.advance("chunk", done)

    results = chunk_documents(
        changes.to_process,
        sizes,
        sentence_embedder=sentence_embedder,
        on_progress=advance,
    )
    progress.done()
    for result in results:
        for warning in result.warnings:
            logger.warning(warning)
    return results


@task(name="embed", cache_policy=NO_CACHE)
def embed_chunks(
    texts: list[str], embedder: Embedder, cache: EmbeddingCache, holds: HoldPoints | None = None
) -> Any:
    return embed_with_cache(
        embedder, cache, texts, after_batch=holds.counter("embed") if holds else None
    )


@task(name="load", cache_policy=NO_CACHE)
def load_index(
    index: IndexStore,
    documents,
    chunks,
    vectors,
    deleted: list[str],
    docs_per_batch: int = DOCS_PER_BATCH,
    before_batch: Any = None,
    stamp_mtimes: dict[str, float] | None = None,
) -> Any:
    logger = get_run_logger()
    progress = Progress(len(chunks), "load chunks", log=logger.info)
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
        before_batch=before_batch,
        stamp_mtimes=stamp_mtimes,
    )
    progress.done()
    return result


def embedding_text(context: str | None, content: str) -> str:
    """What the model embeds: the heading path or type signature, then the chunk."""
    return f"{context}\n{content}" if context else content


@flow(name="ingest", log_prints=True)
def ingest_flow(
    paths: list[str],
    index: str = "default",
    store: str | None = None,
    domain: str | None = None,
    source: str | None = None,
    force: bool = False,
    embedding_model: str | None = None,
) -> dict[str, Any]:
    """Ingest corpora into one index, incrementally: only new and changed documents are
    chunked and embedded, vanished ones are pruned, unchanged ones cost a stat or a hash."""
    settings = Settings.from_env(embedding_model=embedding_model)
    summary = run_ingest(
        paths, settings, index=index, store=store, domain=domain, source=source, force=force
    )
    create_markdown_artifact(
        key=f"ingest-{_artifact_key(index)}",
        markdown=summary_markdown(summary),
        description=f"Ingest summary for index {index}",
    )
    return asdict(summary)


def run_ingest(
    paths: list[str],
    settings: Settings,
    *,
    index: str = "default",
    store: str | None = None,
    domain: str | None = None,
    source: str | None = None,
    force: bool = False,
    before_load_batch: Any = None,
    select: Any = None,
    docs_per_batch: int | None = None,
) -> IngestSummary:
    """`select(source_file) -> bool`, when given, keeps only some of the discovered files (a
    backfill of files modified since a date); documents of the other files stay as they are.
    `before_load_batch(n)` runs before load batch n (fault-injection tests); each batch of
    `docs_per_batch` whole documents (default: settings.load_batch_docs) is one transaction."""
    started = time.perf_counter()
    summary = IngestSummary(index=index)
    check_domain(domain)
    check_model(settings)
    holds = hold_points(settings)
    defaults = Defaults(source, domain, max_document_bytes=settings.max_document_bytes)
    the_store, target, created = _open_target(settings, store, index)
    summary.store = the_store.location
    try:
        _run(
            paths,
            settings,
            summary,
            target,
            defaults,
            force,
            _before_batch(holds, before_load_batch),
            select,
            docs_per_batch=docs_per_batch or settings.load_batch_docs,
            holds=holds,
            store_location=store,
        )
    except (StoreError, EmbeddingError, EmbeddingCacheError, ModelNotFound) as exc:
        _close(the_store, target, index, created)
        raise IngestError(str(exc)) from exc
    except BaseException:
        _close(the_store, target, index, created)
        raise
    target.close()
    summary.seconds = round(time.perf_counter() - started, 3)
    return summary


def check_domain(domain: str | None) -> None:
    if domain is not None and domain not in DOMAINS:
        raise IngestUsageError(f"unknown domain {domain!r} (one of {', '.join(sorted(DOMAINS))})")


def hold_points(settings: Settings) -> HoldPoints:
    try:
        return HoldPoints(settings.hold_at)
    except ValueError as exc:
        raise IngestUsageError(f"RAG_HOLD_AT={exc}") from exc


def _before_batch(holds: HoldPoints, hook: Any) -> Any:
    def before(number: int) -> None:
        holds.reached("load", number)
        if hook is not None:
            hook(number)

    return before


def check_model(settings: Settings) -> None:
    """Fail before anything is written when the local embedding model is missing: finding
    out after chunking would leave a new index behind and waste the work."""
    if settings.embedding_endpoint and settings.embedding_runtime in ("auto", "http"):
        return  # the endpoint is probed (and may fall back) when the embedder loads
    try:
        resolve_model_dir(settings.embedding_model)
    except ModelNotFound as exc:
        raise IngestError(str(exc)) from exc


def preflight(
    settings: Settings, paths: list[str], store: str | None, index: str, domain: str | None
) -> None:
    """Every check a run makes before its first write (paths, domain, model, store, index
    file), without leaving anything behind: the CLI runs it before starting Prefect, so a bad
    argument costs one line of error instead of Prefect's start-up and its traceback."""
    check_paths(paths)
    check_domain(domain)
    check_model(settings)
    hold_points(settings)
    the_store, target, created = _open_target(settings, store, index)
    _close(the_store, target, index, created)


def _open_target(
    settings: Settings, store: str | None, index: str
) -> tuple[Store, IndexStore, bool]:
    try:
        the_store = open_store(store, settings)
        created = index not in the_store.list_indexes()
        if not created:
            refuse_damaged(the_store, index)
        return the_store, the_store.open_index(index, create=True), created
    except InvalidLocation as exc:
        raise IngestUsageError(str(exc)) from exc
    except StoreError as exc:
        raise IngestError(str(exc)) from exc


def refuse_damaged(store: Store, index: str) -> None:
    """Check the index before the first write: writing into a damaged file spreads the
    damage and hides it under new pages."""
    problems = store.check_index(index)
    if problems:
        shown = "; ".join(problems[:3]) + (
            f" (+{len(problems) - 3} more)" if len(problems) > 3 else ""
        )
        raise IngestError(
            f"index {index!r} is damaged ({shown}); nothing was written. "
            "Move the damaged file aside and run the ingest again to rebuild it (the "
            "embedding cache makes the rebuild cheap)"
        )


def _close(the_store: Store, target: IndexStore, index: str, created: bool) -> None:
    """Close the index; one this run created and never wrote a document to goes again, so a
    failed first run leaves no empty index behind."""
    try:
        empty = created and target.stats()["documents"] == 0
    except StoreError:
        empty = False
    target.close()
    if empty:
        with contextlib.suppress(StoreError):  # the run's own error is the one to report
            the_store.drop_index(index)


def _run(
    paths,
    settings,
    summary,
    target,
    defaults,
    force,
    before_load_batch,
    select=None,
    *,
    docs_per_batch: int = DOCS_PER_BATCH,
    holds: HoldPoints | None = None,
    store_location: str | None = None,
):
    with Stage(summary, "discover"):
        sources = discover_sources(paths)
    scope = Scope(paths)
    if select is not None:
        sources = [s for s in sources if select(s)]
        # Only the selected files are this run's: the others' documents must not look vanished.
        scope = Scope([str(s.path) for s in sources])
    with Stage(summary, "read"):
        states = target.document_states()
        plan = plan_reads(sources, states, defaults, force=force)
        summary.files_read = len(plan.to_read)
        read = read_documents(sources, defaults, plan.to_read)
    files_with_rejects = {str(Path(r.file).resolve()) for r in read.rejects}
    with Stage(summary, "detect changes"):
        changes = detect_changes(
            read.documents,
            states,
            scope,
            skipped_unchanged=plan.unchanged_ids,
            files_with_rejects=files_with_rejects,
            force=force,
        )
        stamps = file_stamps(read.documents, states, incomplete_files=files_with_rejects)
    summary.docs_seen = len(read.documents) + len(plan.unchanged_ids)
    summary.docs_new, summary.docs_changed = len(changes.new), len(changes.changed)
    summary.docs_unchanged = len(changes.unchanged_ids)
    summary.docs_deleted = len(changes.deleted_ids)
    rejects = list(read.rejects)

    def record_rejects() -> None:
        summary.rejects = [r.to_dict() for r in rejects]
        summary.docs_rejected = len(rejects)
        if rejects:
            runs = runs_dir(settings, store_location)
            summary.rejects_file = str(_write_rejects(runs, summary.index, rejects))

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
    embedder = _embedder(settings, target, summary)
    sizes = ChunkSizes(
        tokenizer_model=_tokenizer_model(settings, summary),
        target_tokens=settings.chunk_target_tokens,
        max_tokens=settings.chunk_max_tokens,
        overlap_tokens=settings.chunk_overlap_tokens,
        chat_window=settings.chat_window_messages,
    )
    staging = Staging(
        settings.staging_dir,
        summary.index,
        {"model": embedder.model_id, "sizes": asdict(sizes), "format": 1},
    )
    with Stage(summary, "chunk"), _cache(settings) as cache:
        documents, chunks, vectors, rejected = _chunked(
            changes, sizes, embedder, staging, cache, holds, settings.max_chunks_per_document
        )
    rejects.extend(reject for _, reject in rejected)
    record_rejects()
    if rejected:
        # Their files are not complete in the index: read (and report) them again next run.
        incomplete = {doc.source_file for doc, _ in rejected}
        file_of = {doc.doc_id: doc.source_file for doc in read.documents}
        stamps = {d: m for d, m in stamps.items() if file_of.get(d) not in incomplete}
    with Stage(summary, "embed"):
        if vectors is None:
            texts = [
                embedding_text(c, t)
                for c, t in zip(
                    chunks.column("context").to_pylist(),
                    chunks.column("content").to_pylist(),
                    strict=True,
                )
            ]
            with _cache(settings) as cache:
                vectors, hits, embedded = embed_chunks(texts, embedder, cache, holds)
            summary.embedding_cache_hits, summary.chunks_embedded = hits, embedded
            staging.save_vectors(vectors)
    with Stage(summary, "load"):
        result = load_index(
            target,
            documents,
            chunks,
            vectors,
            changes.deleted_ids,
            docs_per_batch=docs_per_batch,
            before_batch=before_load_batch,
            stamp_mtimes=stamps,
        )
    summary.chunks_written, summary.chunks_deleted = result.chunks_written, result.chunks_deleted
    staging.clear()
    summary.notes.extend(getattr(embedder, "notes", []))


def _chunked(
    changes: ChangeSet,
    sizes: ChunkSizes,
    embedder: Embedder,
    staging: Staging,
    cache: EmbeddingCache | None = None,
    holds: HoldPoints | None = None,
    max_chunks: int = 5000,
) -> tuple[pa.Table, pa.Table, np.ndarray | None, list[tuple[Document, Reject]]]:
    """Documents, chunks and (when staged) vectors to load, and the documents the chunk
    stage rejected (`screen`), which are neither staged nor loaded."""
    wanted = {d.doc_id: d.content_hash for d in changes.to_process}
    reused = reusable(staging.load(), wanted)
    reused_ids = set(reused.documents.column("doc_id").to_pylist()) if reused else set()
    todo = ChangeSet(new=[d for d in changes.to_process if d.doc_id not in reused_ids])
    results = chunk_changed(todo, sizes, embedder, cache, holds) if todo.to_process else []
    results, rejects = screen(results, max_chunks)
    documents = documents_to_table(document_rows([r.document for r in results]))
    chunks = chunks_to_table([c for r in results for c in r.chunks])
    if reused is None:
        staging.save_chunks(documents, chunks)
        return documents, chunks, None, rejects
    if not results:
        # Everything was staged already; its vectors too if the embed stage had finished.
        return reused.documents, reused.chunks, reused.vectors, rejects
    # Mixed: embed all rows again; the embedding cache makes the reused ones free.
    documents = pa.concat_tables([reused.documents, documents])
    chunks = pa.concat_tables([reused.chunks, chunks])
    staging.save_chunks(documents, chunks)
    return documents, chunks, None, rejects


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


def _embedder(settings: Settings, target: IndexStore, summary: IngestSummary) -> Embedder:
    embedder = load_embedder(settings)
    # Refuse before any work: vectors of two models in one index silently ruin retrieval.
    try:
        target.bind_model(embedder.model_id, embedder.dim)
    except StoreError as exc:
        raise IngestError(str(exc)) from exc
    return embedder


def _tokenizer_model(settings: Settings, summary: IngestSummary) -> str:
    if (Path(settings.embedding_model) / "tokenizer.json").is_file():
        return settings.embedding_model
    from core.settings import default_model_dir

    summary.notes.append(
        f"{settings.embedding_model} has no local tokenizer.json; chunk sizes are counted "
        "with the default model's tokenizer"
    )
    return default_model_dir()


def _cache(settings: Settings) -> EmbeddingCache:
    return EmbeddingCache(settings.embedding_cache_file)


def runs_dir(settings: Settings, store: str | None) -> Path:
    """Where a run's outputs go: beside an index directory named with --store (a `runs/`
    folder, never listed as an index), else the data directory's `runs/`."""
    if store is not None and not store.startswith(("tidb://", "mysql://")):
        return Path(store) / "runs"
    return settings.data_dir / "runs"


def _write_rejects(runs: Path, index: str, rejects: list[Reject]) -> Path:
    from datetime import UTC, datetime

    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    path = runs / f"ingest-{index}-{stamp}" / "rejects.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for reject in rejects:
            handle.write(json.dumps(reject.to_dict(), ensure_ascii=False) + "\n")
    return path


def summary_markdown(summary: IngestSummary) -> str:
    rows = "\n".join(f"| {key} | {value} |" for key, value in summary.counts().items())
    timings = "\n".join(f"| {k} | {v:.3f} |" for k, v in summary.timings.items())
    text = (
        f"# Ingest into `{summary.index}` ({summary.store})\n\n"
        f"| count | value |\n|---|---|\n{rows}\n\n"
        f"| stage | seconds |\n|---|---|\n{timings}\n"
    )
    if summary.rejects:
        listed = "\n".join(
            f"| {r['file']} | {r['line'] or ''} | {r.get('field') or ''} | {r['reason']} |"
            for r in summary.rejects[:200]
        )
        text += f"\n## Rejects\n\n| file | line | field | reason |\n|---|---|---|---|\n{listed}\n"
    if summary.notes:
        text += "\n## Notes\n\n" + "\n".join(f"- {n}" for n in summary.notes) + "\n"
    return text


def _artifact_key(index: str) -> str:
    # Artifact keys allow lowercase letters, digits and dashes only.
    return "".join(ch if ch.isalnum() else "-" for ch in index.lower()).strip("-") or "index"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m flows.ingest", description=__doc__)
    parser.add_argument("paths", nargs="+", help="JSONL files, globs or directories")
    parser.add_argument("--index", default="default", help="index name (default: default)")
    parser.add_argument("--store", help="store directory or tidb:// URL")
    parser.add_argument("--domain", help="domain for records that do not name one")
    parser.add_argument("--source", help="source for records that do not name one")
    parser.add_argument("--force", action="store_true", help="re-chunk and re-embed everything")
    parser.add_argument("--json", action="store_true", help="last line: the summary as JSON")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        settings = Settings.from_env()
        preflight(settings, args.paths, args.store, args.index, args.domain)
        with temporary_api_server(settings):
            result = ingest_flow(
                paths=args.paths,
                index=args.index,
                store=args.store,
                domain=args.domain,
                source=args.source,
                force=args.force,
            )
    except (IngestError, SourceError, SettingsError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2 if isinstance(exc, (IngestUsageError, SourceError, SettingsError)) else 1
    except ApiServerError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    for reject in result["rejects"]:
        where = f"{reject['file']}:{reject['line']}" if reject["line"] else reject["file"]
        print(f"rejected: {where}: {reject['reason']}", file=sys.stderr)
    if args.json:
        print(json.dumps({key: result[key] for key in SUMMARY_KEYS}))
    else:
        print(human_summary(result))
    return 1 if result["docs_rejected"] else 0


def human_summary(result: dict[str, Any]) -> str:
    lines = [
        f"index {result['index']} in {result['store']}: {result['docs_seen']} documents seen — "
        f"{result['docs_new']} new, {result['docs_changed']} changed, "
        f"{result['docs_unchanged']} unchanged, {result['docs_deleted']} deleted, "
        f"{result['docs_rejected']} rejected",
        f"chunks: {result['chunks_written']} written, {result['chunks_deleted']} deleted, "
        f"{result['chunks_embedded']} embedded, {result['embedding_cache_hits']} from cache",
        "stages: "
        + ", ".join(f"{k} {v:.2f}s" for k, v in result["timings"].items())
        + f"; total {result['seconds']:.2f}s",
    ]
    if result.get("rejects_file"):
        lines.append(f"rejects written to {result['rejects_file']}")
    lines.extend(f"note: {n}" for n in result.get("notes", []))
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
