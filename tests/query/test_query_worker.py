"""The HTTP worker: health, concurrent answers equal to in-process ones, 400s for bad input,
and the CLI's --worker path with the same output and exit codes."""

from __future__ import annotations

import json
import os
import re
import signal
import statistics
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

import query.cli.main as cli_module
from core.settings import Settings
from query.cli.main import main
from query.retrieval.pipeline import answer, make_request
from query.serve import worker_file
from query.serve.guard import Access
from tests.support.query import build_stores, shared_engine, worker_serving

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    return build_stores(tmp_path_factory.getbasetemp() / "query-stores")


@pytest.fixture(scope="module")
def engine(stores):
    return shared_engine(stores)


@pytest.fixture(scope="module")
def url(engine):
    with worker_serving(engine) as served:
        yield served


def call(url: str, path: str, body: bytes | None = None, method: str = "POST"):
    req = urllib.request.Request(url + path, data=body, method=method)
    req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def post(url: str, fields: dict):
    return call(url, "/retrieve", json.dumps(fields).encode())


def ranking(chunks: list[dict]) -> list[tuple]:
    return [(c["index"], c["chunk_id"], c["score"], c["token_count"]) for c in chunks]


def test_health_names_the_indexes_and_the_model(url, engine):
    status, body = call(url, "/health", method="GET")
    assert status == 200
    assert body["status"] == "ok" and body["indexes"] == ["app", "docs"]
    assert body["model"] == engine.model_id() and body["model"]


def test_concurrent_requests_get_the_in_process_answers(url, engine):
    queries = [
        {"query": "push views on a navigation stack", "ios_version": "26.0"},
        {"query": "save trips with SwiftData", "frameworks": ["CloudKit"]},
        {"query": "run tasks concurrently", "domain": "python"},
        {"query": "find the key window", "mode": "bm25", "top_k": 3},
    ]
    for fields in queries:
        fields.update(rerank=False, expand=False)
    expected = [ranking(answer(make_request(f), engine).chunks) for f in queries]
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(lambda i: post(url, queries[i % 4]), range(8)))
    for i, (status, body) in enumerate(results):
        assert status == 200
        got, want = ranking(body["chunks"]), expected[i % 4]
        # The same chunks in the same order; scores may differ in the last printed digit:
        # a warm worker sums BM25 from its postings, this engine asks FTS5 (equal to ~1e-14,
        # which can still flip the sixth decimal of a rounded score).
        assert [(c[0], c[1], c[3]) for c in got] == [(c[0], c[1], c[3]) for c in want]
        assert [c[2] for c in got] == pytest.approx([c[2] for c in want], abs=2e-6)


def test_the_worker_answers_from_its_warm_postings_and_says_so(url):
    fields = {"query": "save trips with SwiftData", "rerank": False, "expand": False}
    status, body = post(url, fields)
    assert status == 200
    assert "keyword path: postings; vector path: exact" in body["notes"]


def test_the_cli_in_process_asks_fts5_and_says_so(stores, capsys):
    argv = ["save trips with SwiftData", "--store", str(stores.main), "--json", "--no-expand"]
    assert main([*argv, "--no-rerank", "--worker", "http://127.0.0.1:9"]) == 0
    notes = json.loads(capsys.readouterr().out)["notes"]
    assert "keyword path: fts5; vector path: exact" in notes


def test_keep_alive_requests_are_not_held_back(url):
    """A connection reused for request after request (an agent's HTTP client) gets each
    answer at once; without TCP_NODELAY each waited ~40 ms for the client's delayed ACK."""
    with httpx.Client() as client:
        client.get(f"{url}/health")
        elapsed = []
        for _ in range(9):
            started = time.perf_counter()
            assert client.get(f"{url}/health").status_code == 200
            elapsed.append(time.perf_counter() - started)
    assert statistics.median(elapsed) < 0.025


def test_invalid_json_is_a_400(url):
    status, body = call(url, "/retrieve", b"{not json")
    assert status == 400 and body["error"].startswith("invalid JSON")


def test_a_body_that_is_not_an_object_is_a_400(url):
    assert post(url, ["query"])[0] == 400


def test_a_missing_query_is_a_400(url):
    assert post(url, {"top_k": 3}) == (400, {"error": "missing query"})


def test_an_unknown_index_is_a_400_listing_the_available_ones(url):
    status, body = post(url, {"query": "q", "indexes": ["nope"]})
    assert status == 400 and "available: app, docs" in body["error"]


def test_an_unknown_path_is_a_404(url):
    assert call(url, "/nothing", method="GET")[0] == 404
    assert call(url, "/nothing", b"{}")[0] == 404


def test_the_cli_through_the_worker_prints_the_same_results(url, stores, engine, capsys):
    argv = ["save trips with SwiftData", "--store", str(stores.main), "--json", "--no-expand"]
    assert main([*argv, "--no-rerank", "--worker", url]) == 0
    remote = json.loads(capsys.readouterr().out)
    local = answer(make_request({"query": argv[0], "expand": False, "rerank": False}), engine)
    assert ranking(remote["chunks"]) == ranking(local.chunks)


def test_the_cli_through_the_worker_keeps_the_exit_codes(url, capsys):
    assert main(["q", "--index", "nope", "--worker", url]) == 2
    assert "unknown index 'nope'" in capsys.readouterr().err
    nothing = ["zzyzx", "--domain", "trading", "--no-user-codebase", "--mode", "bm25"]
    assert main([*nothing, "--worker", url]) == 1


def test_an_unreachable_worker_falls_back_in_process_and_says_so(stores, capsys):
    argv = ["NavigationStack", "--store", str(stores.main), "--mode", "bm25", "--no-expand"]
    dead = "http://127.0.0.1:9"
    assert main([*argv, "--worker", dead]) == 0
    assert f"degraded: worker {dead} unreachable" in capsys.readouterr().err
    assert main([*argv, "--worker", dead, "--strict"]) == 1


def test_a_request_for_another_store_is_refused(url, stores, capsys):
    assert main(["q", "--store", str(stores.mixed), "--worker", url]) == 2
    assert f"serves the store {stores.main}" in capsys.readouterr().err


# Finding a worker without being told where: through its file in the store's folder


@pytest.fixture
def unnamed(monkeypatch):
    monkeypatch.delenv("RAG_QUERY_WORKER_URL", raising=False)


@pytest.fixture
def in_process(monkeypatch):
    """Records the questions the CLI answered in-process."""
    asked: list[str] = []
    real = cli_module.answer_here

    def spy(fields, settings):
        asked.append(fields["query"])
        return real(fields, settings)

    monkeypatch.setattr(cli_module, "answer_here", spy)
    return asked


def test_a_worker_serving_the_same_store_answers_without_being_named(
    url, stores, unnamed, in_process, capsys
):
    assert worker_file.read(stores.main).url == url
    assert main(["NavigationStack", "--store", str(stores.main), "--json"]) == 0
    assert in_process == [] and json.loads(capsys.readouterr().out)["chunks"]


def test_with_no_worker_for_the_store_the_cli_answers_in_process_without_a_note(
    url, stores, unnamed, in_process, capsys
):
    assert main(["NavigationStack", "--store", str(stores.mixed)]) == 0
    assert in_process == ["NavigationStack"] and "worker" not in capsys.readouterr().err


def test_serve_if_absent_starts_a_worker_that_answers_the_next_calls(
    stores, unnamed, in_process, capsys
):
    argv = ["NavigationStack", "--store", str(stores.mixed), "--json"]
    started = ""
    try:
        assert main([*argv, "--serve-if-absent"]) == 0
        started = capsys.readouterr().err
        assert f"started a query worker on {worker_file.read(stores.mixed).url}" in started
        assert main(argv) == 0
        assert in_process == [] and json.loads(capsys.readouterr().out)["chunks"]
    finally:
        pid = re.search(r"\(pid (\d+)", started)
        if pid:
            os.kill(int(pid.group(1)), signal.SIGTERM)
    deadline = time.monotonic() + 30
    while worker_file.path_in(stores.mixed).exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not worker_file.path_in(stores.mixed).exists()  # its clean exit took it along


@pytest.fixture(scope="module")
def token_url(engine):
    access = Access.for_server("127.0.0.1", Settings(), "worker-token")
    with worker_serving(engine, access=access) as served:
        yield served


def test_the_cli_passes_the_users_token_to_a_worker_that_requires_one(
    token_url, stores, monkeypatch, capsys
):
    argv = ["save trips with SwiftData", "--store", str(stores.main), "--json", "--no-expand"]
    monkeypatch.setenv("RAG_AUTH_TOKEN", "worker-token")
    assert main([*argv, "--worker", token_url, "--strict"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["chunks"]
    assert "degraded" not in captured.err


def test_without_the_token_the_cli_is_refused_by_the_worker_and_says_so(
    token_url, stores, monkeypatch, capsys
):
    argv = ["save trips with SwiftData", "--store", str(stores.main), "--no-expand"]
    monkeypatch.delenv("RAG_AUTH_TOKEN", raising=False)
    assert main([*argv, "--worker", token_url, "--strict"]) == 1
    assert "answered 401" in capsys.readouterr().err
