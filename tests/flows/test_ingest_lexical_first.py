"""Without a configured Prefect API, the ingest CLI does not wait for Prefect's temporary
server before reading: the lexical phase runs while the server starts, so the index answers
keyword questions before the command first needs the API, and the flow after it runs the
vector phase and the calibration. `--vectors later` loads no model, and so cannot bind one:
an index built with another model is refused before any work."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from prefect.settings import PREFECT_API_URL
from prefect.testing.utilities import prefect_test_harness

import flows.prefect_api.server
from core.settings import Settings
from core.store.filters import SearchFilter
from core.store.open import open_store
from flows.ingest import main
from loaders.ingest import ingest
from loaders.summary import IngestError
from loaders.target import IngestTarget
from tests.support.ingest import INDEX, copy_corpus, settings_for


class StartingServer:
    """A temporary server's start as the command sees it: `wait()` is the moment the command
    first needs the API, and records what a reader of the index sees then."""

    ready_s = 1.0

    def __init__(self, store: Path, url: str) -> None:
        self.store, self.url = store, url
        self.seen: dict[str, Any] = {}

    def wait(self) -> str:
        index = open_store(str(self.store), Settings()).open_index(INDEX)
        try:
            self.seen = {
                "hits": len(index.bm25_search("lighthouse keeper", SearchFilter(), 5)),
                **index.stats(),
            }
        finally:
            index.close()
        return self.url


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for var, sub in (("DATA", "data"), ("INDEX", "indexes"), ("STAGING", "staging")):
        monkeypatch.setenv(f"RAG_{var}_DIR", str(tmp_path / sub))
    return tmp_path


def run_starting(
    env: Path, monkeypatch: pytest.MonkeyPatch, *extra: str
) -> tuple[int, StartingServer]:
    """The CLI on the fixture corpus, with Prefect's server "starting" (the test harness's
    server behind it) rather than configured."""
    store = env / "store"
    with prefect_test_harness(server_startup_timeout=120):
        start = StartingServer(store, PREFECT_API_URL.value())

        @contextlib.contextmanager
        def starting(settings: Settings) -> Iterator[StartingServer]:
            yield start

        monkeypatch.setattr(flows.prefect_api.server, "starting_api", starting)
        corpus = copy_corpus(env)
        code = main([str(corpus), "--store", str(store), "--index", INDEX, "--json", *extra])
    return code, start


def last_line(capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def test_the_index_answers_keyword_questions_before_the_command_needs_the_api(
    env, monkeypatch, capsys
):
    code, start = run_starting(env, monkeypatch)

    assert code == 0
    assert start.seen["hits"] > 0
    assert start.seen["vectors"] == 0  # the vector phase waits for the flow


def test_the_flow_after_the_lexical_phase_embeds_every_chunk(env, monkeypatch, capsys):
    code, _ = run_starting(env, monkeypatch)

    summary = last_line(capsys)
    assert code == 0
    assert summary["docs_new"] == 4
    assert summary["chunks_embedded"] == summary["chunks_written"] > 0
    assert summary["chunks_pending"] == 0
    assert set(summary["stages"]) >= {"chunk", "load", "embed"}


def test_the_summary_says_when_the_index_first_answered(env, monkeypatch, capsys):
    run_starting(env, monkeypatch, "--vectors", "later")

    phases = last_line(capsys)["phases"]
    assert 0 < phases["searchable"] <= phases["total"]
    assert phases["lexical"] > 0 and phases["api_start"] == StartingServer.ready_s


def test_vectors_later_refuses_an_index_of_another_model_before_any_work(tmp_path: Path):
    settings = settings_for(tmp_path)
    store = str(tmp_path / "store")
    index = open_store(store, settings).open_index(INDEX, create=True)
    index.bind_model("sentence-transformers/all-mpnet-base-v2", 768)
    index.close()
    target = IngestTarget(INDEX, store, defer_vectors=True)

    with pytest.raises(IngestError, match="all-mpnet-base-v2"):
        ingest([str(copy_corpus(tmp_path))], settings, target)

    index = open_store(store, settings).open_index(INDEX)
    assert index.stats()["chunks"] == 0
    index.close()
