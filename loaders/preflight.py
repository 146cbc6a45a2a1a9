"""Everything a run checks before its first write, and the opening and closing of its index.

A bad argument costs one line of error and leaves nothing behind: the CLI runs `preflight`
before Prefect starts, and a run that fails before its first commit removes the index it
created."""

from __future__ import annotations

import contextlib

from chunkers.model import DOMAINS
from chunkers.sources.discovery import check_paths
from core.embedding.base import EmbeddingError
from core.embedding.model_files import ModelNotFetched, model_dir
from core.embedding.models import ModelNotFound, canonical_model_id
from core.embedding.runtimes import load_embedder
from core.settings import Settings
from core.store.contract import IndexStore, InvalidLocation, Store, StoreError
from core.store.open import open_store
from loaders.hold import HoldPoints
from loaders.summary import IngestError, IngestUsageError
from loaders.target import IngestTarget


def preflight(settings: Settings, paths: list[str], target: IngestTarget) -> None:
    """Paths, domain, model, hold point, store and index file, without writing anything: a
    model still to fetch passes (`prepare_model` fetches it)."""
    check_paths(paths)
    check_domain(target.domain)
    check_model(settings, fetch=False)
    hold_points(settings)
    the_store, index, created = open_target(settings, target.store, target.index)
    close_target(the_store, index, target.index, created)


def check_bound_model(index: IndexStore, settings: Settings) -> None:
    """Refuse an index built with another model than the settings' local one before any
    work, when the run does not load the model to bind it (`--vectors later`): its chunks
    could never be embedded. An endpoint's model is known by asking it, which the vector
    phase does (and refuses then)."""
    bound = index.model_id
    if bound is None or (
        settings.embedding_endpoint and settings.embedding_runtime in ("auto", "http")
    ):
        return
    wanted = canonical_model_id(settings.embedding_model)
    if canonical_model_id(bound) != wanted:
        raise IngestError(
            f"index {index.name!r} was built with model {bound!r}, not {wanted!r} "
            "(RAG_EMBEDDING_MODEL): use the same model or rebuild the index"
        )


def check_domain(domain: str | None) -> None:
    if domain is not None and domain not in DOMAINS:
        raise IngestUsageError(f"unknown domain {domain!r} (one of {', '.join(sorted(DOMAINS))})")


def check_model(settings: Settings, *, fetch: bool = True) -> None:
    """Fail before anything is written when the local embedding model is missing (fetching
    it first, when it is pinned and the settings allow): finding out after chunking would
    leave a new index behind and waste the work. Without `fetch`, a model that would be
    fetched passes: `prepare_model` fetches it later."""
    if settings.embedding_endpoint and settings.embedding_runtime in ("auto", "http"):
        return  # the endpoint is probed (and may fall back) when the embedder loads
    try:
        model_dir(settings, fetch=fetch)
    except ModelNotFetched:
        pass
    except ModelNotFound as exc:
        raise IngestError(str(exc)) from exc


def prepare_model(settings: Settings) -> None:
    """The slow part of a run's start, for a command to do while Prefect's server starts:
    fetch the model when it is missing, and load the local embedder, kept for the run's flow
    when the command holds `kept_embedders()` open. A load that fails here is left to the
    flow, which loads the model only when it has something to embed and reports the failure
    as it always has."""
    check_model(settings)
    if settings.embedding_endpoint and settings.embedding_runtime in ("auto", "http"):
        return  # probing an endpoint is not slow preparation, and it may be down for now
    with contextlib.suppress(EmbeddingError, ModelNotFound):
        load_embedder(settings)


def hold_points(settings: Settings) -> HoldPoints:
    try:
        return HoldPoints(settings.hold_at)
    except ValueError as exc:
        raise IngestUsageError(f"RAG_HOLD_AT={exc}") from exc


def open_target(
    settings: Settings, store: str | None, index: str
) -> tuple[Store, IndexStore, bool]:
    """The store, the index (created when missing, checked when not) and whether it was created."""
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


def open_existing(settings: Settings, store: str | None, index: str) -> tuple[Store, IndexStore]:
    """The store and its index `index` opened to write, which must exist: a run that only
    fills in vectors has nothing to make an index from."""
    try:
        the_store = open_store(store, settings)
        names = the_store.list_indexes()
        if index not in names:
            raise IngestUsageError(
                f"no index {index!r} in {the_store.location}"
                + (f" (indexes: {', '.join(sorted(names))})" if names else " (it holds none)")
            )
        refuse_damaged(the_store, index)
        return the_store, the_store.open_index(index, write=True)
    except InvalidLocation as exc:
        raise IngestUsageError(str(exc)) from exc
    except StoreError as exc:
        raise IngestError(str(exc)) from exc


def refuse_damaged(store: Store, index: str) -> None:
    """Check the index before the first write: writing into a damaged file spreads the
    damage and hides it under new pages."""
    problems = store.check_index(index)
    if problems:
        more = f" (+{len(problems) - 3} more)" if len(problems) > 3 else ""
        raise IngestError(
            f"index {index!r} is damaged ({'; '.join(problems[:3])}{more}); nothing was "
            "written. Move the damaged file aside and run the ingest again to rebuild it "
            "(the embedding cache makes the rebuild cheap)"
        )


def close_target(the_store: Store, target: IndexStore, index: str, created: bool) -> None:
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
