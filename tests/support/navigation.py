"""The navigation fixtures (tests/fixtures/navigation: a small multi-file project per
language) ingested into a temporary store, for the `symbol` command's and the MCP tools'
tests."""

from __future__ import annotations

from pathlib import Path

from core.settings import Settings
from core.store.sqlite.store import SQLiteStore
from loaders.ingest import ingest
from loaders.target import IngestTarget
from query.retrieval.engine import Engine
from tests.support import paths
from tests.support.query import WordCounter, no_expansion

NAVIGATION = paths.FIXTURES / "navigation"


def ingest_into(base: Path, corpus: Path, index: str = "app") -> Path:
    """`corpus` ingested (incrementally, as a re-run) into index `index` of `base`/store."""
    store = base / "store"
    summary = ingest([str(corpus)], settings_for(base), IngestTarget(index=index, store=str(store)))
    assert not summary.rejects
    return store


def settings_for(base: Path) -> Settings:
    """The settings `ingest_into(base, ...)` ingested with."""
    return Settings(data_dir=base / "data", index_dir=base / "cache", staging_dir=base / "staging")


def keyword_engine(store: Path, settings: Settings | None = None) -> Engine:
    """An engine over `store` with no model of any kind: keyword search and navigation."""
    return Engine(
        settings or Settings(),
        SQLiteStore(store),
        embedder=None,
        reranker=None,
        llm=None,
        counter=WordCounter(),
        expander=no_expansion,
    )
