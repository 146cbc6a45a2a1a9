"""`python -m flows.ingest DIR --watch` as a user runs it, in its own process: an added
function is retrievable within seconds and only it is embedded, a deleted file's chunks are
gone within seconds, the runs wait for the index's write slot while another run holds it,
and SIGTERM or Ctrl-C ends the watch cleanly with a summary.

Deadlines, never fixed sleeps: each wait polls until its condition holds or time is up."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from core.embedding.cache import EmbeddingCache
from core.settings import Settings
from core.store.modes import ONE_SHOT
from query.retrieval.engine import Engine
from query.retrieval.pipeline import answer
from query.types import QueryRequest
from tests.support.ops import PrefectServer, prefect_api, shared_server
from tests.support.paths import FIXTURES, ROOT

pytestmark = pytest.mark.slow

T = TypeVar("T")
INDEX = "app"
DEADLINE_S = 10.0  # from a file's change to its retrieval (the acceptance)
START_S = 300.0  # Prefect's temporary server, the model and the first ingest, on a busy box
NEW_FUNCTION = """
/// Archives finished trips into one file the user can share.
func archiveFinishedTrips(_ trips: [Trip]) -> URL {
    URL(fileURLWithPath: "trips.zip")
}
"""


def settings_for(tmp_path: Path) -> Settings:
    return Settings(
        data_dir=tmp_path / "data",
        index_dir=tmp_path / "indexes",
        staging_dir=tmp_path / "staging",
    )


def environment(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "RAG_"))}
    env.update(
        {
            "RAG_DATA_DIR": str(tmp_path / "data"),
            "RAG_INDEX_DIR": str(tmp_path / "indexes"),
            "RAG_STAGING_DIR": str(tmp_path / "staging"),
            "RAG_PREFECT_STARTUP_TIMEOUT_S": "120",
            "PREFECT_HOME": str(tmp_path / "prefect"),
            "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
            "DO_NOT_TRACK": "1",
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
        }
    )
    env.update(extra)
    return env


def poll(check: Callable[[], T | None], timeout: float, what: str, on_fail: str = "") -> T:
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout:.0f}s: {what}\n{on_fail}")
        time.sleep(0.1)


class WatchProcess:
    """The watch CLI with its stdout and stderr in files (no pipe to fill up)."""

    def __init__(self, code: Path, store: Path, env: dict[str, str], logs: Path) -> None:
        self.out, self.err = logs / "watch.out", logs / "watch.err"
        args = [str(code), "--index", INDEX, "--store", str(store), "--watch", "--json"]
        with self.out.open("wb") as out, self.err.open("wb") as err:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "flows.ingest", *args],
                stdout=out,
                stderr=err,
                env=env,
                cwd=ROOT,
            )

    def stderr(self) -> str:
        return self.err.read_text(errors="replace")

    def lines(self) -> list[dict[str, Any]]:
        text = self.out.read_text(errors="replace")
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    def run(self, number: int, timeout: float = 60) -> dict[str, Any]:
        def finished() -> dict[str, Any] | None:
            assert self.process.poll() is None, f"the watch exited\n{self.stderr()[-3000:]}"
            runs = (line for line in self.lines() if line["kind"] == "run")
            return next((line for line in runs if line["run"] == number), None)

        return poll(finished, timeout, f"run {number}", self.stderr()[-3000:])

    def terminate(self, how: signal.Signals = signal.SIGTERM) -> int:
        if self.process.poll() is None:
            self.process.send_signal(how)
        try:
            return self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            raise


@pytest.fixture
def code(tmp_path: Path) -> Path:
    root = tmp_path / "code"
    shutil.copytree(FIXTURES / "query" / "app", root)
    return root


def chunk_count(store: Path, where: str, *args: str) -> int:
    conn = sqlite3.connect(f"file:{store / f'{INDEX}.sqlite'}?mode=ro", uri=True)
    try:
        return conn.execute(f"SELECT count(*) FROM chunks WHERE {where}", args).fetchone()[0]
    finally:
        conn.close()


def retrieve(engine: Engine, query: str) -> list[dict[str, Any]]:
    request = QueryRequest(query=query, indexes=(INDEX,), top_k=5, rerank=False, expand=False)
    return answer(request, engine).chunks


def test_edits_and_deletions_reach_retrieval_within_seconds(code: Path, tmp_path: Path):
    settings, store = settings_for(tmp_path), tmp_path / "store"
    watcher = WatchProcess(code, store, environment(tmp_path), tmp_path)
    try:
        first = watcher.run(1, timeout=START_S)
        engine = Engine.open(settings, str(store), modes=ONE_SHOT)
        query = "archive finished trips into a file to share"
        assert not any("archiveFinishedTrips" in c["content"] for c in retrieve(engine, query))
        with EmbeddingCache(settings.embedding_cache_file) as cache:
            cached_before = cache.count()

        with (code / "TripStore.swift").open("a") as handle:
            handle.write(NEW_FUNCTION)
        found = poll(
            lambda: [c for c in retrieve(engine, query) if "archiveFinishedTrips" in c["content"]],
            DEADLINE_S,
            "the added function retrievable",
            watcher.stderr()[-3000:],
        )
        edit = watcher.run(2)
        with EmbeddingCache(settings.embedding_cache_file) as cache:
            cached_after = cache.count()

        (code / "Trip+Duration.swift").unlink()
        gone = "doc_id = ?", "user_codebase:Trip+Duration.swift"
        poll(
            lambda: (
                chunk_count(store, *gone) == 0
                and all(c["path"] != "Trip+Duration.swift" for c in retrieve(engine, "trip nights"))
            ),
            DEADLINE_S,
            "the deleted file's chunks gone",
            watcher.stderr()[-3000:],
        )
        deletion = watcher.run(3)
        engine.close()
    finally:
        code_on_exit = watcher.terminate()

    assert first["docs_new"] == 2 and first["chunks_embedded"] == first["chunks_written"]
    assert found[0]["path"] == "TripStore.swift"
    # Only the new function's chunk reached the model; the file's other chunks, and the
    # other file, came from the cache or were not read at all.
    assert (edit["docs_new"], edit["docs_changed"], edit["docs_unchanged"]) == (0, 1, 1)
    assert edit["chunks_embedded"] == 1 == cached_after - cached_before
    assert edit["embedding_cache_hits"] == edit["chunks_written"] - 1
    assert (deletion["docs_deleted"], deletion["chunks_embedded"]) == (1, 0)
    assert deletion["chunks_deleted"] > 0
    # SIGTERM: a clean exit with the watch's summary as the last line.
    assert code_on_exit == 0
    totals = watcher.lines()[-1]
    assert (totals["kind"], totals["runs"], totals["runs_failed"]) == ("totals", 3, 0)
    assert totals["chunks_embedded"] == first["chunks_embedded"] + 1
    err = watcher.stderr()
    assert "Traceback" not in err and "Loading weights" not in err
    assert "run 2 (1 changed path): 0 new, 1 changed" in err


def test_a_run_waits_while_another_run_holds_the_index_slot(
    code: Path, tmp_path: Path, request: pytest.FixtureRequest
):
    from flows.index_lock import index_slot

    server: PrefectServer = shared_server(request.config)
    store = tmp_path / "store"
    # The watcher talks to the same API as this test: no temporary server of its own.
    watcher = WatchProcess(code, store, environment(tmp_path, **server.env()), tmp_path)
    # The chunk text is stored compressed; its symbol is plain.
    added = "symbol LIKE ?", "%archiveFinishedTrips%"
    try:
        watcher.run(1, timeout=START_S)
        with prefect_api(server), index_slot(INDEX):
            with (code / "TripStore.swift").open("a") as handle:
                handle.write(NEW_FUNCTION)
            poll(
                lambda: "waiting for the write slot of index app" in watcher.stderr(),
                60,
                "the watcher to wait for the slot",
                watcher.stderr()[-3000:],
            )
            held_back = chunk_count(store, *added), len(watcher.lines())
        watcher.run(2)
    finally:
        code_on_exit = watcher.terminate(signal.SIGINT)  # Ctrl-C

    assert held_back == (0, 1)  # nothing written, no second run, while the slot was held
    assert chunk_count(store, *added) == 1
    assert code_on_exit == 0
    assert watcher.lines()[-1]["runs"] == 2
