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


def kill_at(hold: str, corpus: Path, tmp_path: Path) -> list[int]:
    """Run the ingest CLI until it holds at `hold`, SIGKILL it; the Prefect server pids it had."""
    env = {**os.environ, **environment(tmp_path), "RAG_HOLD_AT": hold}
    args = [sys.executable, "-m", "flows.ingest", str(corpus), "--index", INDEX, "--json"]
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
        "chunk:20",  # a third of the documents chunked, nothing embedded or loaded
        "embed:3",  # three embedding batches in the cache
        "load:1",  # the first load batch committed
        "load:3",  # every batch but the last committed
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
