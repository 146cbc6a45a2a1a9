"""SIGKILL of a real ingest process at every stage: the next run loads every good record and
embeds nothing that was embedded before the kill, the run after does no work, the index
passes SQLite's integrity check throughout, and no Prefect server outlives the killed run.

The ingest CLI runs as a subprocess with `RAG_HOLD_AT=stage:n` (loaders.hold): it prints
`holding at ...` and sleeps at that exact point, and the test kills it there."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from core.embedding.cache import EmbeddingCache
from core.settings import Settings
from flows.ingest_flow import run_ingest
from loaders.target import IngestTarget
from tests.support.paths import ROOT

pytestmark = pytest.mark.slow

REPO = ROOT
RECORDS = 60
INDEX = "crash"


def write_corpus(path: Path) -> Path:
    """RECORDS markdown records of one short section each: one chunk per record."""
    with path.open("w", encoding="utf-8") as handle:
        for i in range(RECORDS):
            words = " ".join(f"term{(i * 7 + j) % 23}" for j in range(30))
            text = f"# Record {i}\n\nRecord {i} is about {words}."
            record = {"id": f"rec-{i}", "text": text, "source": "blog", "domain": "general"}
            handle.write(json.dumps(record) + "\n")
    return path


def environment(tmp_path: Path) -> dict[str, str]:
    """Every path inside tmp_path; small batches so each stage has several steps to kill."""
    return {
        "RAG_DATA_DIR": str(tmp_path / "data"),
        "RAG_INDEX_DIR": str(tmp_path / "store"),
        "RAG_STAGING_DIR": str(tmp_path / "staging"),
        "RAG_LOAD_BATCH_DOCS": "16",
        "RAG_EMBEDDING_BATCH_SIZE": "8",
        "RAG_VECTOR_PAGE_CHUNKS": "16",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "120",
        "RAG_PREFECT_STARTUP_TIMEOUT_S": "120",
    }


def children(pid: int) -> list[int]:
    try:
        return [child.pid for child in psutil.Process(pid).children()]
    except psutil.NoSuchProcess:
        return []


def runs_prefect_server(pid: int) -> bool:
    try:
        process = psutil.Process(pid)
        if process.status() == psutil.STATUS_ZOMBIE:
            return False
        return "prefect.server.api.server" in " ".join(process.cmdline())
    except psutil.Error:
        return False  # gone


def kill_at(hold: str, corpus: Path, tmp_path: Path, *, command: str = "ingest") -> list[int]:
    """Run the ingest (or embed) CLI until it holds at `hold`, SIGKILL it; the Prefect server
    pids it had."""
    env = {**os.environ, **environment(tmp_path), "RAG_HOLD_AT": hold}
    if command == "ingest":
        args = [sys.executable, "-m", "flows.ingest", str(corpus), "--index", INDEX, "--json"]
    else:
        args = [sys.executable, "-m", "flows.embed", "--index", INDEX, "--json"]
    proc = subprocess.Popen(
        args, env=env, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    assert proc.stderr is not None
    seen = []
    deadline = time.monotonic() + 240
    for raw in proc.stderr:
        line = raw.decode("utf-8", "replace")
        seen.append(line)
        if "holding at" in line or time.monotonic() > deadline:
            break
    assert any(f"holding at {hold}" in line for line in seen), "".join(seen[-20:])
    servers = [pid for pid in children(proc.pid) if runs_prefect_server(pid)]
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    return servers


def integrity(tmp_path: Path) -> str:
    conn = sqlite3.connect(tmp_path / "store" / f"{INDEX}.sqlite")
    try:
        return conn.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        conn.close()


def cached_vectors(settings: Settings) -> int:
    if not settings.embedding_cache_file.exists():
        return 0
    with EmbeddingCache(settings.embedding_cache_file) as cache:
        return cache.count()


def loaded_documents(tmp_path: Path) -> int:
    conn = sqlite3.connect(tmp_path / "store" / f"{INDEX}.sqlite")
    try:
        return conn.execute("SELECT count(*) FROM documents").fetchone()[0]
    finally:
        conn.close()


@pytest.mark.parametrize(
    "hold",
    [
        "chunk:20",  # a third of the documents chunked, nothing loaded or embedded
        "load:1",  # the first load batch committed
        "load:3",  # every load batch but the last committed
        "embed:3",  # every chunk loaded, three embedding batches in the cache
        "vectors:2",  # two pages of vectors committed
    ],
)
def test_a_killed_ingest_loses_nothing_and_recomputes_nothing(hold: str, tmp_path: Path):
    corpus = write_corpus(tmp_path / "records.jsonl")
    settings = Settings.from_env(environment(tmp_path))

    servers = kill_at(hold, corpus, tmp_path)

    assert servers, "the killed run had no Prefect server to watch"
    deadline = time.monotonic() + 15
    while any(runs_prefect_server(pid) for pid in servers) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(runs_prefect_server(pid) for pid in servers), "Prefect server outlived it"
    index_file = tmp_path / "store" / f"{INDEX}.sqlite"
    if index_file.exists():
        assert integrity(tmp_path) == "ok"
    already_embedded = cached_vectors(settings)

    resumed = run_ingest([str(corpus)], settings, IngestTarget(index=INDEX))

    assert loaded_documents(tmp_path) == RECORDS
    assert resumed.docs_new + resumed.docs_unchanged == RECORDS
    assert resumed.chunks_embedded == RECORDS - already_embedded
    assert integrity(tmp_path) == "ok"
    assert not (tmp_path / "staging" / INDEX).exists()

    again = run_ingest([str(corpus)], settings, IngestTarget(index=INDEX))

    assert again.docs_unchanged == RECORDS
    assert (again.docs_new, again.chunks_written, again.chunks_embedded) == (0, 0, 0)
    assert again.files_read == 0  # the mtime fast path: the file is known complete


def index_rows(index_file: Path) -> list[tuple]:
    """Every chunk with its vector, in id order: what two indexes must share to be equal."""
    conn = sqlite3.connect(index_file)
    try:
        return conn.execute(
            "SELECT c.chunk_id, c.doc_id, c.content_hash, v.embedding FROM chunks AS c "
            "LEFT JOIN vectors AS v ON v.chunk_id = c.chunk_id ORDER BY c.chunk_id"
        ).fetchall()
    finally:
        conn.close()


def test_embed_after_a_kill_in_the_vector_phase_embeds_only_what_was_pending(tmp_path: Path):
    corpus = write_corpus(tmp_path / "records.jsonl")
    settings = Settings.from_env(environment(tmp_path))
    kill_at("vectors:2", corpus, tmp_path)
    index_file = tmp_path / "store" / f"{INDEX}.sqlite"
    assert integrity(tmp_path) == "ok"
    assert loaded_documents(tmp_path) == RECORDS  # the lexical phase had finished
    with_vectors = sum(row[3] is not None for row in index_rows(index_file))
    assert with_vectors == 2 * 16  # two pages committed before the kill
    cached = cached_vectors(settings)
    reached: list[str] = []

    from flows.embed_flow import run_embed
    from loaders.hold import HoldPoints

    finished = run_embed(
        settings,
        IngestTarget(index=INDEX),
        holds=HoldPoints(hook=lambda stage, _: reached.append(stage)),
    )

    pending = RECORDS - with_vectors
    assert finished.chunks_embedded + finished.embedding_cache_hits == pending
    assert finished.chunks_embedded == RECORDS - cached  # the killed page's batches: cached
    assert (finished.chunks_pending, finished.vector_coverage) == (0, 1.0)
    assert "chunk" not in reached and "load" not in reached  # nothing chunked or loaded again
    assert integrity(tmp_path) == "ok"
    # The same index an uninterrupted ingest makes.
    clean = tmp_path / "clean"
    clean.mkdir()
    run_ingest([str(corpus)], Settings.from_env(environment(clean)), IngestTarget(index=INDEX))
    assert index_rows(index_file) == index_rows(clean / "store" / f"{INDEX}.sqlite")


def test_a_killed_embed_is_finished_by_the_next(tmp_path: Path):
    corpus = write_corpus(tmp_path / "records.jsonl")
    settings = Settings.from_env(environment(tmp_path))
    run_ingest([str(corpus)], settings, IngestTarget(index=INDEX, defer_vectors=True))
    index_file = tmp_path / "store" / f"{INDEX}.sqlite"
    assert all(row[3] is None for row in index_rows(index_file))

    kill_at("vectors:1", corpus, tmp_path, command="embed")

    assert integrity(tmp_path) == "ok"
    assert sum(row[3] is not None for row in index_rows(index_file)) == 16

    from flows.embed_flow import run_embed

    finished = run_embed(settings, IngestTarget(index=INDEX))
    assert finished.chunks_pending == 0
    assert finished.chunks_embedded + finished.embedding_cache_hits == RECORDS - 16
    again = run_embed(settings, IngestTarget(index=INDEX))
    assert (again.chunks_embedded, again.embedding_cache_hits, again.chunks_pending) == (0, 0, 0)
