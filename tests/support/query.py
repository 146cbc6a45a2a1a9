"""Helpers of the query tests: tiny fakes of the engine's parts, and one real store built
once per test session from tests/fixtures/query with the real ingest flow and MiniLM."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from core.settings import Settings
from core.store.contract import FUSION_COLUMNS, Declaration, Hit, StoreError, UnknownIndex
from core.store.filters import SearchFilter
from core.store.modes import LONG_LIVED
from core.store.text_key import text_key
from loaders.target import IngestTarget
from query.retrieval.engine import Engine
from tests.support import paths

FIXTURES = paths.FIXTURES / "query"


# -- fakes -------------------------------------------------------------------------------


def row(chunk_id: str, content: str | None = None, **fields: Any) -> dict[str, Any]:
    """A stored chunk with harmless defaults (iOS docs, no versions)."""
    base = {
        "chunk_id": chunk_id,
        "content": content if content is not None else f"content of {chunk_id}",
        "context": "",
        "source": "apple_docs",
        "domain": "ios",
        "chunk_type": "api_doc",
        "framework_tags": [],
        "deprecated": False,
        "deprecated_in_int": None,
        "ios_version_min_int": None,
        "ios_version_max_int": None,
    }
    base.update(fields)
    return base


class FakeIndex:
    """Fixed rankings per signal whatever the query; the filter applied with `admits`."""

    def __init__(
        self,
        name: str,
        rows: list[dict[str, Any]],
        vector: list[str] | None = None,
        bm25: list[str] | None = None,
        *,
        model_id: str | None = "fake-model",
        dim: int = 4,
        bm25_by_text: dict[str, list[str]] | None = None,
        calibration: str | None = None,
        pending: tuple[str, ...] = (),
    ) -> None:
        self.name = name
        self.pending = set(pending)  # chunks without a vector yet
        self.calibration = calibration
        self.rows = {r["chunk_id"]: r for r in rows}
        self.vector = vector if vector is not None else [r["chunk_id"] for r in rows]
        self.bm25 = bm25 if bm25 is not None else [r["chunk_id"] for r in rows]
        self.bm25_by_text = bm25_by_text or {}
        self.model_id = model_id
        self.dim = dim if model_id else None
        self.calls: list[tuple[str, Any, int]] = []

    def _ranked(self, ids: list[str], filt: SearchFilter, k: int) -> list[Hit]:
        admitted = [cid for cid in ids if filt.admits(self.rows[cid])][:k]
        return [Hit(cid, float(len(admitted) - i)) for i, cid in enumerate(admitted)]

    def vector_search(self, query: np.ndarray, filt: SearchFilter, k: int) -> list[Hit]:
        self.calls.append(("vector", None, k))
        return self._ranked(self.vector, filt, k)

    def bm25_search(self, text: str, filt: SearchFilter, k: int) -> list[Hit]:
        self.calls.append(("bm25", text, k))
        return self._ranked(self.bm25_by_text.get(text, self.bm25), filt, k)

    def fetch(self, chunk_ids: list[str]) -> dict[str, dict[str, Any]]:
        return {cid: dict(self.rows[cid]) for cid in chunk_ids if cid in self.rows}

    def without_vectors(self, chunk_ids: list[str]) -> set[str]:
        return self.pending.intersection(chunk_ids)

    def fetch_light(self, chunk_ids: list[str]) -> dict[str, dict[str, Any]]:
        return {
            cid: {
                **{name: self.rows[cid].get(name) for name in FUSION_COLUMNS},
                "text_key": text_key(self.rows[cid].get("content")),
            }
            for cid in chunk_ids
            if cid in self.rows
        }

    def document_titles(self) -> list[tuple[str, str]]:
        return [(r["title"], cid) for cid, r in self.rows.items() if r.get("title")]

    def chunk_symbols(self) -> list[Declaration]:
        return [
            Declaration(r["symbol"], r.get("kind") or "", r.get("doc_id") or cid, cid)
            for cid, r in self.rows.items()
            if r.get("symbol")
        ]

    def fusion_calibration(self) -> str | None:
        return self.calibration

    def stats(self) -> dict[str, Any]:
        vectors = len(self.rows) - len(self.pending) if self.model_id else 0
        return {"chunks": len(self.rows), "vectors": vectors}

    def close(self) -> None:
        pass


class FakeStore:
    location = "tidb://fake-host/fake-store"  # a store of test doubles, named like a remote one

    def __init__(self, *indexes: FakeIndex, broken: tuple[str, ...] = ()) -> None:
        self.indexes = {i.name: i for i in indexes}
        self.broken = broken  # listed, but fail to open

    def list_indexes(self) -> list[str]:
        return sorted([*self.indexes, *self.broken])

    def open_index(self, name: str, *, create: bool = False) -> FakeIndex:
        if name in self.broken:
            raise StoreError(f"{name}.sqlite is not an index")
        if name not in self.indexes:
            raise UnknownIndex(f"no index {name!r}")
        return self.indexes[name]


class FakeEmbedder:
    model_id = "fake-model"
    dim = 4
    notes: list[str] = []

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        return np.full((len(texts), self.dim), 0.5, dtype=np.float32)


class WordCounter:
    """One token per whitespace-separated word: pack arithmetic by eye."""

    def count_many(self, texts: list[str]) -> list[int]:
        return [len(t.split()) for t in texts]

    def count(self, text: str) -> int:
        return len(text.split())


class FakeReranker:
    """Scores passages from a table keyed by a word in them; unknown passages are None
    (as if the time budget ran out before them)."""

    name = "fake-reranker"

    def __init__(self, scores: dict[str, float]) -> None:
        self.scores = scores

    def score(self, query: str, passages: list[str], *, budget_ms: int) -> list[float | None]:
        out: list[float | None] = []
        for passage in passages:
            hit = [s for word, s in self.scores.items() if word in passage.split()]
            out.append(hit[0] if hit else None)
        return out


@dataclass
class FakeExpansion:
    variants: list[str]
    method: str = "fake"
    notes: list[str] = field(default_factory=list)


def no_expansion(query: str, **kwargs: Any) -> FakeExpansion:
    return FakeExpansion([query])


def fake_engine(
    *indexes: FakeIndex,
    settings: Settings | None = None,
    broken: tuple[str, ...] = (),
    **parts: Any,
) -> Engine:
    parts.setdefault("embedder", FakeEmbedder())
    parts.setdefault("reranker", None)
    parts.setdefault("llm", None)
    parts.setdefault("counter", WordCounter())
    parts.setdefault("expander", no_expansion)
    return Engine(settings or Settings(), FakeStore(*indexes, broken=broken), **parts)


# -- the real store ---------------------------------------------------------------------


@dataclass(frozen=True)
class BuiltStores:
    settings: Settings
    main: Path  # indexes "docs" (Apple + Python docs) and "app" (a user's Swift code)
    mixed: Path  # "docs" and "legacy", a copy whose recorded model differs from MiniLM


_BUILT: dict[str, Any] = {}
_LOCK = threading.Lock()


def build_stores(base: Path) -> BuiltStores:
    """Built once per session, whichever test module asks first (fixtures imported into
    several modules would otherwise run once per module)."""
    from flows.ingest_flow import run_ingest

    with _LOCK:
        if "stores" in _BUILT:
            return _BUILT["stores"]
        settings = Settings(
            data_dir=base / "data",
            index_dir=base / "cache",  # the embedding cache, apart from the stores
            staging_dir=base / "staging",
        )
        main, mixed = base / "main", base / "mixed"
        docs = [str(FIXTURES / "apple_docs.jsonl"), str(FIXTURES / "python_docs.jsonl")]
        for summary in (
            run_ingest(docs, settings, IngestTarget(index="docs", store=str(main))),
            run_ingest(
                [str(FIXTURES / "app")], settings, IngestTarget(index="app", store=str(main))
            ),
        ):
            assert not summary.rejects, summary.rejects
        mixed.mkdir()
        for name in ("docs", "legacy"):
            _copy_index(main / "docs.sqlite", mixed / f"{name}.sqlite")
        conn = sqlite3.connect(mixed / "legacy.sqlite")
        with conn:
            conn.execute("UPDATE meta SET model_id = 'acme/other-embedder'")
        conn.close()
        _BUILT["stores"] = BuiltStores(settings, main, mixed)
        return _BUILT["stores"]


def shared_engine(stores: BuiltStores) -> Engine:
    """One warm engine on the main store for the whole session, as the worker keeps one
    (opened LONG_LIVED and its indexes warmed: keyword searches from the postings)."""
    with _LOCK:
        if "engine" not in _BUILT:
            engine = Engine.open(stores.settings, str(stores.main), modes=LONG_LIVED)
            engine.warm_indexes()
            _BUILT["engine"] = engine
        return _BUILT["engine"]


def _copy_index(source: Path, target: Path) -> None:
    """A consistent copy, WAL included (the backup API reads through SQLite)."""
    src, dst = sqlite3.connect(source), sqlite3.connect(target)
    try:
        src.backup(dst)
    finally:
        src.close()
        dst.close()


@contextmanager
def worker_serving(engine: Engine, **options: Any) -> Iterator[str]:
    """A real worker (uvicorn on a free loopback port) around `engine` while the block runs;
    its URL. `options` go to make_server (limits, access, app)."""
    from query.serve.worker import make_server

    server = make_server(engine, "127.0.0.1", 0, log=lambda line: None, **options)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.url
    finally:
        server.shutdown()
        server.server_close()
