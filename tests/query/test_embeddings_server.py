"""The embeddings server (`python -m query embeddings-server`): the project's own model over
OpenAI's `POST /v1/embeddings`, so that an ingest elsewhere embeds with it.

A server gives the vectors the local runtime gives for the same texts, answers errors in
OpenAI's shape, names the model it serves when asked for another, turns requests away with
503 when saturated, and requires the token when one is set. Every server here is real:
the real model behind uvicorn, in this process or as the command in a child process.
"""

from __future__ import annotations

import base64
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import numpy as np
import pytest

from core.embedding.base import BatchedEmbedder, EmbeddingHTTPError
from core.embedding.identity import model_identity
from core.embedding.runtimes import http_embedder, load_local_embedder
from core.settings import Settings
from query.serve.embeddings import EmbeddingLimits, EmbeddingsServer, ServedModel
from query.serve.guard import LOOPBACK_NAMES, Access
from tests.support.embeddings_server import embeddings_server
from tests.support.paths import FIXTURES, ROOT

TOKEN = "embeddings-token-for-tests"
LOOPBACK_ONLY = Access(frozenset(LOOPBACK_NAMES), False, frozenset(), None)


def real_texts() -> list[str]:
    """Paragraphs of a real documentation page and a Swift file."""
    page = (FIXTURES / "prose" / "docc_page.md").read_text(encoding="utf-8")
    swift = (FIXTURES / "swift" / "main.swift").read_text(encoding="utf-8")
    paragraphs = [p.strip() for p in page.split("\n\n") if len(p.strip()) > 40]
    return [*paragraphs[:6], swift[:1500]]


@pytest.fixture(scope="module")
def local() -> BatchedEmbedder:
    """The local runtime the server runs (ONNX Runtime here), loaded in this process."""
    return load_local_embedder(Settings())


@contextmanager
def serving(model: ServedModel, limits: EmbeddingLimits | None = None) -> Iterator[str]:
    server = EmbeddingsServer(model, LOOPBACK_ONLY, "127.0.0.1", 0, limits=limits)
    server.start_in_thread()
    try:
        yield server.url
    finally:
        server.shutdown()


@pytest.fixture(scope="module")
def url(local: BatchedEmbedder) -> Iterator[str]:
    with serving(ServedModel(local)) as served:
        yield served


def post(url: str, body: object, **kwargs) -> httpx.Response:
    return httpx.post(f"{url}/v1/embeddings", json=body, timeout=60, **kwargs)


def long_texts(n: int) -> list[str]:
    """`n` texts longer than the model's limit: a request that takes seconds."""
    return [(FIXTURES / "prose" / "docc_page.md").read_text(encoding="utf-8")] * n


def wait_in_flight(url: str) -> None:
    deadline = time.monotonic() + 30
    while httpx.get(f"{url}/health", timeout=10).json()["in_flight"] < 1:
        assert time.monotonic() < deadline, "the request never arrived"
        time.sleep(0.01)


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.sum(a * b, axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


@pytest.mark.slow
def test_the_client_with_the_token_gets_the_local_runtimes_vectors_from_the_command(
    local, tmp_path: Path, monkeypatch
):
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN)
    token_file.chmod(0o600)
    with embeddings_server(tmp_path / "server.log", "--token-file", str(token_file)) as server:
        monkeypatch.setenv("EMBEDDING_ENDPOINT", server.url)
        monkeypatch.setenv("EMBEDDING_ENDPOINT_TOKEN", TOKEN)
        settings = Settings.from_env()
        client = http_embedder(settings)
        try:
            remote = client.embed_documents(real_texts())
        finally:
            client.close()
    assert cosines(remote, local.embed_documents(real_texts())).min() >= 0.9999


@pytest.mark.slow
def test_a_request_without_the_token_is_refused_with_401_in_openais_shape(tmp_path: Path):
    with embeddings_server(tmp_path / "server.log", env={"RAG_AUTH_TOKEN": TOKEN}) as server:
        client = http_embedder(Settings(embedding_endpoint=server.url))
        try:
            with pytest.raises(EmbeddingHTTPError) as refused:
                client.embed_documents(["a text"])
        finally:
            client.close()
        raw = post(server.url, {"model": server.identity["model"], "input": "a text"})
    assert refused.value.status == 401
    assert raw.status_code == 401 and raw.json()["error"]["code"] == "invalid_api_key"


@pytest.mark.slow
def test_sigterm_lets_the_request_in_flight_finish_then_stops_the_command(tmp_path: Path):
    with embeddings_server(tmp_path / "server.log") as server:
        body = {"model": server.identity["model"], "input": long_texts(16)}
        answered: list[httpx.Response] = []
        running = threading.Thread(target=lambda: answered.append(post(server.url, body)))
        running.start()
        wait_in_flight(server.url)
        code = server.stop(timeout_s=120)  # SIGTERM
        running.join(60)
    assert answered[0].status_code == 200 and len(answered[0].json()["data"]) == 16
    # uvicorn stops serving, finishes what is in flight, then ends by the signal it got.
    assert code == -signal.SIGTERM, server.log.read_text()


@pytest.mark.slow
def test_health_reports_the_served_models_identity(url, local):
    health = httpx.get(f"{url}/health", timeout=10).json()
    identity = model_identity(local)
    expected = {
        "model": identity.model_id,
        "revision": identity.revision,
        "runtime": identity.runtime,
        "precision": identity.precision,
        "dim": identity.dim,
    }
    assert {k: health[k] for k in expected} == expected
    assert health["status"] == "ok" and identity.revision and identity.runtime == "onnx"


@pytest.mark.slow
def test_the_model_answers_to_its_short_name_as_to_its_id(url, local):
    ids = [
        post(url, {"model": name, "input": "a text"})
        for name in (local.model_id, "all-MiniLM-L6-v2")
    ]
    assert [r.status_code for r in ids] == [200, 200]
    assert ids[0].json()["data"] == ids[1].json()["data"]


@pytest.mark.slow
def test_another_model_is_refused_with_404_naming_the_served_one(url, local):
    reply = post(url, {"model": "BAAI/bge-small-en-v1.5", "input": "a text"})
    error = reply.json()["error"]
    assert reply.status_code == 404 and error["code"] == "model_not_found"
    assert local.model_id in error["message"] and "BAAI/bge-small-en-v1.5" in error["message"]


@pytest.mark.slow
@pytest.mark.parametrize(
    "body",
    [
        b'{"model": "all-MiniLM-L6-v2", "input": ["unclosed"',
        b'["all-MiniLM-L6-v2", "a text"]',
        b'{"model": "all-MiniLM-L6-v2", "input": []}',
        b'{"model": "all-MiniLM-L6-v2", "input": ""}',
        b'{"model": "all-MiniLM-L6-v2", "input": [[101, 2023, 102]]}',
        b'{"model": "all-MiniLM-L6-v2", "input": "a text", "encoding_format": "int8"}',
        b'{"input": "a text"}',
    ],
    ids=[
        "invalid-json",
        "not-an-object",
        "no-input",
        "empty-text",
        "token-ids",
        "format",
        "no-model",
    ],
)
def test_a_malformed_request_gets_400_in_openais_error_shape(url, body):
    reply = httpx.post(
        f"{url}/v1/embeddings",
        content=body,
        headers={"Content-Type": "application/json"},
        timeout=10,
    )
    assert reply.status_code == 400
    error = reply.json()["error"]
    assert error["type"] == "invalid_request_error" and error["message"]


@pytest.mark.slow
def test_more_inputs_than_the_limit_get_400_before_any_embedding(local):
    with serving(ServedModel(local), EmbeddingLimits(max_inputs=4)) as limited:
        reply = post(limited, {"model": local.model_id, "input": ["a text"] * 5})
    assert reply.status_code == 400 and "at most 4" in reply.json()["error"]["message"]


@pytest.mark.slow
def test_base64_encoding_carries_the_same_vectors_as_floats(url, local):
    texts = real_texts()[:3]
    floats = post(url, {"model": local.model_id, "input": texts}).json()["data"]
    packed = post(url, {"model": local.model_id, "input": texts, "encoding_format": "base64"})
    decoded = [
        np.frombuffer(base64.b64decode(d["embedding"]), "<f4") for d in packed.json()["data"]
    ]
    assert np.array_equal(np.array(decoded), np.array([d["embedding"] for d in floats], np.float32))


@pytest.mark.slow
def test_a_saturated_server_answers_503_with_retry_after(local):
    with serving(ServedModel(local), EmbeddingLimits(max_pending=1)) as busy:
        first: list[httpx.Response] = []
        running = threading.Thread(
            target=lambda: first.append(
                post(busy, {"model": local.model_id, "input": long_texts(32)})
            )
        )
        running.start()
        wait_in_flight(busy)
        second = post(busy, {"model": local.model_id, "input": "a text"})
        running.join(120)
    assert second.status_code == 503 and second.headers["Retry-After"] == "1"
    assert second.json()["error"]["type"] == "server_error"
    assert first[0].status_code == 200 and len(first[0].json()["data"]) == 32


def test_a_non_loopback_host_without_a_token_exits_2_before_loading_the_model():
    environment = {k: v for k, v in os.environ.items() if k != "RAG_AUTH_TOKEN"}
    done = subprocess.run(
        [sys.executable, "-m", "query", "embeddings-server", "--host", "0.0.0.0", "--port", "0"],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "--host 0.0.0.0" in done.stderr and "--token-file" in done.stderr
