"""`--executor endpoints` over two real embedding servers (`rag-retrieve embeddings-server`,
each serving the model over OpenAI's protocol in a process of its own), one of them killed
mid-run: every chunk gets its vector once, the same as the local vector phase's, and the
killed server's shards move to the other."""

from __future__ import annotations

import os
import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from core.settings import Settings
from core.store.open import open_store
from core.store.sqlite.store import SQLiteStore
from loaders.hold import HoldPoints
from loaders.ingest import embed, ingest
from loaders.target import IngestTarget
from tests.core.test_tidb_store import DSN_VAR, mariadb_dsn
from tests.flows.test_embed_dask import tidb_counts
from tests.support.embeddings_server import RunningEmbeddingsServer, start_embeddings_server
from tests.support.ingest import INDEX, copy_corpus

pytestmark = pytest.mark.slow


def settings_in(root: Path, **overrides: object) -> Settings:
    return Settings.from_env(
        data_dir=root / "data",
        index_dir=root / "indexes",
        staging_dir=root / "staging",
        vector_spool_dir=root / "spool",
        fusion_calibration=False,
        # The fixture corpus's chunks in six shards or more.
        vector_shard_tokens=100,
        **overrides,
    )


def pending_store(root: Path, name: str) -> Path:
    store = root / name
    corpus = copy_corpus(root / f"{name}-src")
    target = IngestTarget(INDEX, str(store), defer_vectors=True)
    ingest([str(corpus)], settings_in(root), target)
    return store


def stored_vectors(store: Path) -> dict[str, np.ndarray]:
    with sqlite3.connect(store / f"{INDEX}.sqlite") as conn:
        rows = conn.execute("SELECT chunk_id, embedding FROM vectors").fetchall()
        duplicates = conn.execute("SELECT COUNT(*) - COUNT(DISTINCT chunk_id) FROM vectors")
        assert duplicates.fetchone() == (0,)
    return {c: np.frombuffer(blob, dtype=np.float16).astype(np.float32) for c, blob in rows}


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[tuple[RunningEmbeddingsServer, RunningEmbeddingsServer]]:
    """Two servers of the model; the first is killed mid-run by the test."""
    # One ONNX thread per server: two servers share this machine's cores.
    env = {"RAG_EMBEDDING_THREADS": "1"}
    doomed = start_embeddings_server(tmp_path / "doomed.log", env=env)
    try:
        steady = start_embeddings_server(tmp_path / "steady.log", env=env)
    except BaseException:
        doomed.stop()
        raise
    try:
        yield doomed, steady
    finally:
        doomed.stop()
        steady.stop()


def embed_on_the_pool(root: Path, store: str, index: str, servers) -> tuple:
    """Embed `index` of `store` on the pool, killing the first server when the first shard's
    outcome comes back; then again. (summary, second summary)."""
    doomed, steady = servers

    def kill_doomed(stage: str, count: int) -> None:
        if (stage, count) == ("vectors", 0):  # as the first shard's outcome comes back
            doomed.process.kill()
            doomed.process.wait()

    # An embedding cache of its own (under root/pool): the local run's would answer it all.
    pool = settings_in(
        root / "pool",
        vector_executor="endpoints",
        embedding_endpoints=f"{doomed.url},{steady.url}",
        # One shard in flight per server: when the first outcome comes back, at least four
        # shards are still to run, so the dead server is given one or is running one.
        endpoint_concurrency=1,
    )
    summary = embed(pool, IngestTarget(index, store), holds=HoldPoints(hook=kill_doomed))
    return summary, embed(pool, IngestTarget(index, store))


def assert_moved_to_the_steady_server(summary, servers) -> None:
    doomed, steady = servers
    shards = summary.vector_shards
    assert shards is not None and shards["executor"] == "endpoints"
    assert shards["failed"] == 0 and summary.chunks_pending == 0
    # Only the doomed server fails runs: a shard run more than once was on it when it died
    # (or sent to it before it was found dead), and finished on the other.
    moved = [r for r in shards["reports"] if r["attempts"] > 1]
    assert shards["resubmitted"] >= 1 and moved
    assert all(r["worker"] == steady.url for r in moved)
    assert {r["worker"] for r in shards["reports"]} <= {doomed.url, steady.url}


def test_a_server_killed_mid_run_hands_its_shards_to_the_other_and_no_chunk_is_lost(
    tmp_path: Path, servers
):
    local_store = pending_store(tmp_path, "local")
    spread_store = pending_store(tmp_path, "spread")
    embed(settings_in(tmp_path), IngestTarget(INDEX, str(local_store)))
    summary, again = embed_on_the_pool(tmp_path, str(spread_store), INDEX, servers)

    assert_moved_to_the_steady_server(summary, servers)
    local, spread = stored_vectors(local_store), stored_vectors(spread_store)
    with SQLiteStore(spread_store).open_index(INDEX) as index:
        assert len(spread) == int(index.stats()["chunks"])
    assert sorted(spread) == sorted(local)
    cosines = [
        float(local[c] @ spread[c]) / float(np.linalg.norm(local[c]) * np.linalg.norm(spread[c]))
        for c in local
    ]
    assert min(cosines) >= 0.9999
    with sqlite3.connect(spread_store / f"{INDEX}.sqlite") as conn:
        done = conn.execute("SELECT COUNT(*) FROM vector_shards WHERE state = 'done'").fetchone()
    assert done == (summary.vector_shards["shards"],)
    assert SQLiteStore(spread_store).check_index(INDEX) == []
    assert (again.chunks_embedded, again.chunks_pending) == (0, 0)


@pytest.mark.mariadb
def test_on_tidb_the_pool_s_shards_are_written_once_when_a_server_dies(tmp_path: Path, servers):
    if not os.environ.get(DSN_VAR):
        pytest.skip(f"{DSN_VAR} is not set")
    name = f"pool_{uuid.uuid4().hex[:10]}"
    corpus = copy_corpus(tmp_path / "src")
    target = IngestTarget(name, mariadb_dsn(), defer_vectors=True)
    ingest([str(corpus)], settings_in(tmp_path), target)
    try:
        summary, again = embed_on_the_pool(tmp_path, mariadb_dsn(), name, servers)
        assert_moved_to_the_steady_server(summary, servers)
        chunks, vectors, distinct, done = tidb_counts(name)
        assert chunks == vectors == distinct and done == summary.vector_shards["shards"]
        assert open_store(mariadb_dsn(), Settings()).check_index(name) == []
        assert (again.chunks_embedded, again.chunks_pending) == (0, 0)
    finally:
        open_store(mariadb_dsn(), Settings()).drop_index(name)
