"""`rag-retrieve embed --executor dask` through the real flow, on a real LocalCluster of two
single-threaded workers: the same vectors as the local vector phase, every chunk loaded
once even when a worker dies mid-shard or the flow's process is killed, and nothing to do
the second time."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path

import numpy as np
import pytest
from prefect.settings import PREFECT_API_URL
from prefect.testing.utilities import prefect_test_harness

from core.settings import Settings
from core.store.filters import SearchFilter
from core.store.open import open_store
from core.store.sqlite.store import SQLiteStore
from flows.embed import main as embed_main
from flows.ingest import main as ingest_main
from tests.core.test_tidb_store import DSN_VAR, mariadb_dsn
from tests.support.ingest import INDEX, copy_corpus
from tests.support.paths import ROOT

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("prefect_dask") is None, reason="needs the dask extra"
    ),
]
DASK = ["--executor", "dask", "--workers", "2"]


@pytest.fixture(scope="module")
def prefect_api():
    with prefect_test_harness(server_startup_timeout=120):
        yield


@pytest.fixture
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for var, sub in (("DATA", "data"), ("INDEX", "indexes"), ("STAGING", "staging")):
        monkeypatch.setenv(f"RAG_{var}_DIR", str(tmp_path / sub))
    # The fixture corpus's twelve chunks in several shards.
    monkeypatch.setenv("RAG_VECTOR_SHARD_TOKENS", "150")
    return tmp_path


def pending_index(root: Path, name: str = "store") -> Path:
    """A store whose index holds the fixture corpus's chunks, none with a vector yet."""
    store = root / name
    argv = [str(copy_corpus(root / f"{name}-src")), "--store", str(store), "--index", INDEX]
    assert ingest_main([*argv, "--vectors", "later"]) == 0
    return store


def embed(store: Path, capsys: pytest.CaptureFixture[str], *flags: str) -> dict:
    assert embed_main(["--store", str(store), "--index", INDEX, "--json", *flags]) == 0
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def stored_vectors(store: Path) -> dict[str, np.ndarray]:
    with sqlite3.connect(store / f"{INDEX}.sqlite") as conn:
        rows = conn.execute("SELECT chunk_id, embedding FROM vectors").fetchall()
    return {
        chunk_id: np.frombuffer(blob, dtype=np.float16).astype(np.float32)
        for chunk_id, blob in rows
    }


def chunk_count(store: Path) -> int:
    with SQLiteStore(store).open_index(INDEX) as index:
        return int(index.stats()["chunks"])


def test_dask_and_local_give_every_chunk_the_same_vector(
    prefect_api, isolated, capsys, monkeypatch
):
    local_store, dask_store = pending_index(isolated, "local"), pending_index(isolated, "dask")
    capsys.readouterr()
    embed(local_store, capsys)
    # An embedding cache of its own: the local run's would give the dask run every vector.
    monkeypatch.setenv("RAG_INDEX_DIR", str(isolated / "dask-cache"))
    summary = embed(dask_store, capsys, *DASK)
    assert summary["vector_shards"]["shards"] > 1
    local, spread = stored_vectors(local_store), stored_vectors(dask_store)
    assert sorted(spread) == sorted(local) and len(local) == chunk_count(local_store)
    cosines = [
        float(local[c] @ spread[c]) / float(np.linalg.norm(local[c]) * np.linalg.norm(spread[c]))
        for c in local
    ]
    assert min(cosines) >= 0.9999


def test_a_worker_killed_mid_shard_costs_a_resubmission_not_a_chunk(
    prefect_api, isolated, capsys, monkeypatch
):
    store = pending_index(isolated)
    capsys.readouterr()
    marker = isolated / "worker-killed"
    monkeypatch.setenv("RAG_FAULT_KILL_WORKER", str(marker))
    summary = embed(store, capsys, *DASK)
    assert marker.is_file()  # a worker did die mid-shard
    shards = summary["vector_shards"]
    assert shards["resubmitted"] >= 1 and shards["failed"] == 0
    assert summary["chunks_pending"] == 0
    vectors = stored_vectors(store)
    assert len(vectors) == chunk_count(store)
    with sqlite3.connect(store / f"{INDEX}.sqlite") as conn:
        assert conn.execute(
            "SELECT COUNT(*) - COUNT(DISTINCT chunk_id) FROM vectors"
        ).fetchone() == (0,)
        done = conn.execute("SELECT COUNT(*) FROM vector_shards WHERE state = 'done'").fetchone()
    assert done == (shards["shards"],)
    assert SQLiteStore(store).check_index(INDEX) == []


def test_a_second_embed_embeds_nothing(prefect_api, isolated, capsys):
    store = pending_index(isolated)
    capsys.readouterr()
    first = embed(store, capsys, *DASK)
    again = embed(store, capsys, *DASK)
    assert first["chunks_embedded"] > 0
    assert (again["chunks_embedded"], again["chunks_pending"]) == (0, 0)
    assert "vector_shards" not in again


def test_after_the_flow_is_killed_mid_run_embed_embeds_only_what_is_pending(
    prefect_api, isolated, capsys
):
    store = pending_index(isolated)
    total = chunk_count(store)
    env = {
        **os.environ,
        # The checkout only: the test process's sys.path may hold folders (bench/) whose
        # scripts shadow standard modules in a child.
        "PYTHONPATH": str(ROOT),
        "PREFECT_API_URL": str(PREFECT_API_URL.value()),
        "RAG_HOLD_AT": "vectors:1",  # after the first shard is loaded
    }
    command = [sys.executable, "-m", "flows.embed", "--store", str(store), "--index", INDEX, *DASK]
    process = subprocess.Popen(
        command, env=env, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        assert process.stderr is not None
        deadline = time.monotonic() + 600
        seen: list[str] = []
        for line in process.stderr:
            seen.append(line)
            if "holding at vectors:1" in line or time.monotonic() > deadline:
                break
        # A run that ends before its hold says why (its stderr), rather than an empty index.
        assert any("holding at vectors:1" in line for line in seen), "".join(seen[-60:])
        # Readers keep answering while the run holds between two shards.
        with SQLiteStore(store).open_index(INDEX) as index:
            assert index.bm25_search("lighthouse", SearchFilter(), 5)
            vectors = stored_vectors(store)
            some = next(iter(vectors))
            assert index.vector_search(vectors[some], SearchFilter(), 1)[0].chunk_id == some
            pending = total - len(vectors)
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    assert 0 < pending < total
    capsys.readouterr()
    summary = embed(store, capsys, *DASK)
    assert summary["chunks_embedded"] == pending
    assert len(stored_vectors(store)) == total


def test_a_shard_out_of_attempts_is_recorded_failed_and_the_next_embed_retries_it(
    prefect_api, isolated, capsys, monkeypatch
):
    store = pending_index(isolated)
    capsys.readouterr()
    monkeypatch.setenv("RAG_FAULT_KILL_WORKER", str(isolated / "worker-killed"))
    monkeypatch.setenv("RAG_VECTOR_SHARD_ATTEMPTS", "1")
    first = embed(store, capsys, *DASK)
    shards = first["vector_shards"]
    failed = [r for r in shards["reports"] if not r["ok"]]
    assert shards["failed"] == len(failed) == 1
    assert "KilledWorker" in failed[0]["error"] and failed[0]["attempts"] == 1
    assert 0 < first["chunks_pending"] == failed[0]["chunks"]
    with sqlite3.connect(store / f"{INDEX}.sqlite") as conn:
        states = dict(conn.execute("SELECT state, COUNT(*) FROM vector_shards GROUP BY state"))
    assert states == {"done": shards["shards"] - 1, "failed": 1}
    again = embed(store, capsys, *DASK)
    assert again["chunks_embedded"] == failed[0]["chunks"] and again["chunks_pending"] == 0


# -- TiDB (the MariaDB stand-in): each worker writes its own shard -----------------------


@pytest.fixture
def tidb_index(isolated: Path, capsys: pytest.CaptureFixture[str]):
    """A TiDB index holding the fixture corpus's chunks, none with a vector yet."""
    if not os.environ.get(DSN_VAR):
        pytest.skip(f"{DSN_VAR} is not set")
    name = f"dask_{uuid.uuid4().hex[:10]}"
    argv = [str(copy_corpus(isolated / "src")), "--store", mariadb_dsn(), "--index", name]
    assert ingest_main([*argv, "--vectors", "later"]) == 0
    capsys.readouterr()
    yield name
    open_store(mariadb_dsn(), Settings()).drop_index(name)


def tidb_counts(name: str) -> tuple[int, int, int, int]:
    """(chunks, chunks with a vector, distinct chunk ids, shards recorded done)."""
    conn = open_store(mariadb_dsn(), Settings()).connect()
    try:
        with conn.cursor() as cur:
            cur.execute(
                f"SELECT COUNT(*), COUNT(embedding), COUNT(DISTINCT chunk_id) FROM rag_{name}_chunks"
            )
            chunks, vectors, distinct = cur.fetchone()
            cur.execute(f"SELECT COUNT(*) FROM rag_{name}_shards WHERE state = 'done'")
            (done,) = cur.fetchone()
    finally:
        conn.close()
    return chunks, vectors, distinct, done


@pytest.mark.mariadb
def test_on_tidb_the_workers_write_their_shards_and_a_killed_one_loses_nothing(
    prefect_api, isolated, tidb_index, capsys, monkeypatch
):
    marker = isolated / "worker-killed"
    monkeypatch.setenv("RAG_FAULT_KILL_WORKER", str(marker))
    argv = ["--store", mariadb_dsn(), "--index", tidb_index, "--json", *DASK]
    assert embed_main(argv) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    shards = summary["vector_shards"]
    assert shards["shards"] > 1 and shards["resubmitted"] >= 1 and shards["failed"] == 0
    # Every shard was written by a worker process, the killed one's by another: it died
    # after its first model batch, before any write. (Whether its restarted process takes
    # a shard too is a race with the survivor, so it is not asserted.)
    workers = {r["worker"] for r in shards["reports"]}
    assert workers and marker.read_text() not in workers
    chunks, vectors, distinct, done = tidb_counts(tidb_index)
    assert chunks == vectors == distinct and done == shards["shards"]
    assert summary["chunks_pending"] == 0
    assert open_store(mariadb_dsn(), Settings()).check_index(tidb_index) == []
    assert embed_main(argv) == 0
    again = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert again["chunks_embedded"] == 0
