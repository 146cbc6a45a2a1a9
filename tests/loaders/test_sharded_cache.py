"""The embedding cache in a vector phase spread over workers (loaders/sharded.py): what a
shard's worker computed is kept by its text, and a later phase over the same texts takes it
from the cache instead of sending a shard anywhere."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from core.embedding.cache import EmbeddingCache
from core.settings import Settings
from core.store.sqlite.store import SQLiteStore
from loaders.executors.endpoints import PROBE_TEXTS, EndpointsExecutor
from loaders.sharded import embed_sharded
from tests.fixtures.embedding.openai_server import running_server
from tests.support.fake_runtime import FakeEmbedder
from tests.support.store_contract import batch_of, make_chunk

DIM = 384
CHUNKS = 10


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(
        index_dir=tmp_path / "indexes",
        vector_spool_dir=tmp_path / "spool",
        vector_shard_tokens=100,
        embedding_timeout_s=5,
    )


def pending_index(settings: Settings, name: str):
    index = SQLiteStore(settings.index_dir).open_index(name, create=True)
    index.bind_model("fake/model", DIM)
    chunks = [make_chunk(f"c{i}", f"d{i}", content=f"paragraph {i} " * 40) for i in range(CHUNKS)]
    index.apply(batch_of(chunks, without_vectors=True))
    return index


def shard_requests(server) -> int:
    probe = {*PROBE_TEXTS, "dimension probe"}
    return sum(1 for body in server.requests if not set(body["input"]) <= probe)


def test_a_second_index_of_the_same_texts_takes_every_vector_from_the_cache(settings):
    embedder = FakeEmbedder(dim=DIM)
    first, second = pending_index(settings, "first"), pending_index(settings, "second")
    with running_server(DIM) as server, EmbeddingCache(settings.embedding_cache_file) as cache:
        pool = EndpointsExecutor([server.endpoint], settings, concurrency=2, attempts=2)
        spread = embed_sharded(first, embedder, pool, settings, None, cache=cache)
        sent = shard_requests(server)
        again = embed_sharded(second, embedder, pool, settings, None, cache=cache)
        assert shard_requests(server) == sent > 0  # the second phase sent nothing
        assert cache.count() == CHUNKS
    assert (spread.embedded, spread.cache_hits) == (CHUNKS, 0)
    assert (again.embedded, again.cache_hits, again.pending_after) == (0, CHUNKS, 0)
    assert again.shard_reports == []
    first.close()
    second.close()
    assert stored(settings, "second") == stored(settings, "first")
    assert len(stored(settings, "first")) == CHUNKS


def stored(settings: Settings, name: str) -> dict[str, bytes]:
    with sqlite3.connect(settings.index_dir / f"{name}.sqlite") as conn:
        return dict(conn.execute("SELECT chunk_id, embedding FROM vectors").fetchall())
