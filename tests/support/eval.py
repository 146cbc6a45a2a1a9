"""Running `python -m query.eval` in-process on the test fixtures: the hashed bag-of-words
embedder stands in for MiniLM and expansion returns the question as it is."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chunkers.sources.discovery import discover
from chunkers.sources.reading import Defaults, read_all
from core.settings import Settings
from core.store.open import open_store
from loaders.ingest import ingest_documents
from query.eval.runner import run_eval
from tests.support.embedders import HashEmbedder
from tests.support.paths import FIXTURES

TINY = FIXTURES / "eval" / "tiny"


@dataclass
class Expansion:
    variants: list[str]
    method: str = "test-identity"
    notes: list[str] = field(default_factory=list)


def identity_expansion(query: str, **kwargs: Any) -> Expansion:
    return Expansion([query])


def evaluate(tmp_path: Path, modes: list[str], **kwargs: Any) -> dict[str, Any]:
    parts = {
        "embedder": HashEmbedder(),
        "reranker": None,
        "llm": None,
        "expander": identity_expansion,
        **kwargs.pop("parts", {}),
    }
    settings = Settings(index_dir=tmp_path / "cache", candidates_per_signal=100)
    return run_eval(
        kwargs.pop("dataset", TINY),
        split="test",
        modes=modes,
        settings=settings,
        store_dir=kwargs.pop("store_dir", None),
        limit=kwargs.pop("limit", None),
        log=lambda message: None,
        engine_parts=parts,
        **kwargs,
    )


def ingested_index(tmp_path: Path, name: str, corpus: Path) -> list:
    """Index `name` of the store under tmp_path, made from `corpus` as a user's ingest reads
    it (the bag-of-words test embedder); the documents read."""
    settings = Settings(index_dir=tmp_path / "cache", candidates_per_signal=100)
    index = open_store(str(tmp_path / "store"), settings).open_index(name, create=True)
    try:
        documents = read_all(discover([corpus]), Defaults()).documents
        ingest_documents(documents, index, settings, embedder=HashEmbedder())
    finally:
        index.close()
    return documents
