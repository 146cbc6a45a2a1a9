"""Fusion reads no chunk text: candidates are deduplicated by their stored text_key and only the
rows shown are fetched whole. The answers must be exactly those of reading every candidate's
text, which is what a query does on rows stored without keys: the same SQLite indexes, copied
and stripped of their keys, are the reference."""

from __future__ import annotations

import json
import random
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from core.settings import Settings
from core.store.modes import LONG_LIVED, ONE_SHOT, StoreModes
from core.store.sqlite.store import SQLiteStore
from core.store.text_key import text_key
from query.retrieval.engine import Engine
from query.retrieval.pipeline import answer, make_request
from tests.support.query import WordCounter, no_expansion
from tests.support.store_contract import DIM, MODEL, batch_of, make_chunk, vector_for

WORDS = [
    "view",
    "stack",
    "navigation",
    "model",
    "data",
    "query",
    "fetch",
    "persist",
    "cache",
    "token",
    "async",
    "task",
]
FRAMEWORKS = ["SwiftUI", "SwiftData", "Foundation", "UIKit"]
SYMBOLS = ["TripStore", "fetch_user", "NavigationStack", "ModelContainer"]
INDEXES = ("docs", "app")

# Each request once per store mode: plain, each boost and the demotion, duplicates named
# by their own words, budgets, both fusions, links off, and CoRAG.
REQUESTS: list[dict[str, Any]] = [
    {"query": "navigation stack view"},
    {"query": "persist model data", "ios_version": "16.0"},
    {"query": "persist model data", "ios_version": "16.0", "include_deprecated": True},
    {"query": "fetch cache token", "frameworks": ["SwiftData", "UIKit"]},
    {"query": "how does TripStore fetch_user work"},
    {"query": "async task query", "top_k": 3, "max_tokens": 40},
    {"query": "shared passage about caching tokens", "fusion": "rrf"},
    {"query": "shared passage about caching tokens", "links": False, "top_k": 20},
    {"query": "view model", "mode": "vector"},
    {"query": "stack data", "mode": "bm25", "indexes": ["app"]},
    {"query": "NavigationStack ModelContainer", "corag": True},
]


class TextEmbedder:
    """A unit vector per query text, in the fixture's model and dimension."""

    model_id = MODEL
    dim = DIM
    notes: list[str] = []

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        return np.stack([vector_for(text) for text in texts])


def corpus(index: str, seed: int) -> list[Any]:
    """Chunks with frameworks, versions, deprecations, declared symbols and members, and
    passages repeated within and across the indexes with other whitespace and case."""
    rng = random.Random(seed)
    shared = "A shared passage about caching tokens in an async task."
    chunks = []
    for n in range(120):
        doc = f"{index}-doc-{n // 4}"
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 30)))
        if n % 17 == 0:
            words = shared if n % 34 else "  " + shared.upper().replace(" ", "\n ")
        elif n % 23 == 0:
            words = "   "  # no words at all: never a duplicate of another
        fields: dict[str, Any] = {
            "chunk_index": n % 4,
            "content": words,
            "context": f"{index} > section {n % 7}",
            "framework_tags": rng.sample(FRAMEWORKS, rng.randint(0, 2)),
            "token_count": len(words.split()),
        }
        if n % 5 == 0:
            fields |= {"ios_version_min": "15.0", "ios_version_min_int": 150000}
        if n % 9 == 0:
            fields |= {"deprecated": True, "deprecated_in": "16.0", "deprecated_in_int": 160000}
        if n % 11 == 0:
            fields |= {"symbol": rng.choice(SYMBOLS), "kind": "class"}
            fields |= {"metadata": json.dumps({"members": ["fetch_user"]})}
        chunks.append(make_chunk(f"{index}-{n:03d}", doc, **fields))
    return chunks


@pytest.fixture(scope="module")
def stores(tmp_path_factory) -> tuple[Path, Path]:
    """(the indexes with their text keys, a copy of them stripped of the keys)."""
    keyed = tmp_path_factory.mktemp("keyed")
    store = SQLiteStore(keyed)
    for seed, name in enumerate(INDEXES):
        index = store.open_index(name, create=True)
        index.bind_model(MODEL, DIM)
        index.apply(batch_of(corpus(name, seed)))
        index.close()
    bare = tmp_path_factory.mktemp("bare")
    for name in INDEXES:
        shutil.copy(keyed / f"{name}.sqlite", bare / f"{name}.sqlite")
        with closing(sqlite3.connect(bare / f"{name}.sqlite")) as conn, conn:
            conn.execute("UPDATE chunks SET text_key = NULL")
    return keyed, bare


def answers(store_dir: Path, modes: StoreModes) -> list[str]:
    engine = Engine(
        Settings(),
        SQLiteStore(store_dir, modes=modes),
        embedder=TextEmbedder(),
        reranker=None,
        llm=None,
        counter=WordCounter(),
        expander=no_expansion,
    )
    engine.warm_indexes()
    out = []
    try:
        for request in REQUESTS:
            response = answer(make_request({"rerank": False, **request}), engine)
            response.timings_ms = {}
            out.append(json.dumps(response.__dict__, sort_keys=True, default=str))
    finally:
        engine.close()
    return out


def test_the_fixture_holds_duplicates_that_fusion_must_drop(stores):
    keyed, _ = stores
    with closing(sqlite3.connect(keyed / "docs.sqlite")) as conn:
        keys = [k for (k,) in conn.execute("SELECT text_key FROM chunks")]
    assert len(keys) - len(set(keys)) >= 5 and None not in keys


@pytest.mark.parametrize("modes", [ONE_SHOT, LONG_LIVED], ids=["fts5", "in-memory"])
def test_answers_read_from_text_keys_equal_answers_read_from_every_text(stores, modes):
    keyed, bare = stores
    assert answers(keyed, modes) == answers(bare, modes)


def test_fusion_fetches_whole_rows_of_the_shown_chunks_only(stores, monkeypatch):
    keyed, _ = stores
    fetched: list[str] = []
    original = SQLiteStore.open_index

    def spying(self, name, **kwargs):
        index = original(self, name, **kwargs)
        real = index.fetch
        monkeypatch.setattr(index, "fetch", lambda ids: fetched.extend(ids) or real(ids))
        return index

    monkeypatch.setattr(SQLiteStore, "open_index", spying)
    engine = Engine(
        Settings(),
        SQLiteStore(keyed, modes=LONG_LIVED),
        embedder=TextEmbedder(),
        reranker=None,
        llm=None,
        counter=WordCounter(),
        expander=no_expansion,
    )
    try:
        request = make_request({"query": "view stack data", "top_k": 5, "links": False})
        response = answer(request, engine)
    finally:
        engine.close()
    shown = [c["chunk_id"] for c in response.chunks]
    assert len(shown) == 5
    # The top five, and the chunks whose keys another candidate shares (compared by text).
    assert set(shown) <= set(fetched) and len(fetched) < 20


def test_an_index_stored_without_text_keys_gets_them_when_opened_to_write(tmp_path):
    store = SQLiteStore(tmp_path)
    index = store.open_index("docs", create=True)
    index.bind_model(MODEL, DIM)
    index.apply(batch_of(corpus("docs", 0)))
    index.close()
    with closing(sqlite3.connect(tmp_path / "docs.sqlite")) as conn, conn:
        conn.execute("UPDATE chunks SET text_key = NULL")
        conn.execute("UPDATE meta SET text_keys_filled = 0")
    SQLiteStore(tmp_path).open_index("docs", write=True).close()
    with closing(sqlite3.connect(tmp_path / "docs.sqlite")) as conn:
        rows = conn.execute("SELECT chunk_id, text_key FROM chunks").fetchall()
    contents = {c.chunk_id: c.content for c in corpus("docs", 0)}
    assert rows and all(key == text_key(contents[cid]) for cid, key in rows)
