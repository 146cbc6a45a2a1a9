"""The HTTP runtime against a local server speaking the OpenAI embeddings shape."""

from __future__ import annotations

import numpy as np
import pytest

from core.embedding.base import EmbeddingHTTPError, EmbeddingResponseError, EndpointUnavailable
from core.embedding.http_runtime import HTTPEmbedder, embeddings_url
from core.embedding.models import model_spec
from tests.fixtures.embedding.openai_server import closed_port_endpoint, running_server
from tests.support.fake_runtime import text_vector

TEXTS = ["alpha", "beta gamma", "delta epsilon zeta", "eta"]


def unit_rows(texts: list[str], dim: int) -> np.ndarray:
    rows = np.stack([text_vector(t, dim) for t in texts])
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


@pytest.fixture
def server():
    with running_server(dim=384) as server:
        yield server


def embedder(endpoint: str, spec_name: str = "all-MiniLM-L6-v2", **kw) -> HTTPEmbedder:
    return HTTPEmbedder(endpoint, model_spec(spec_name), **kw)


def test_embeds_in_input_order_with_unit_rows(server):
    vectors = embedder(server.endpoint).embed_documents(TEXTS)
    np.testing.assert_allclose(vectors, unit_rows(TEXTS, 384), rtol=1e-5)


def test_request_names_the_model_and_sends_prefixed_input(server):
    http = embedder(server.endpoint, "bge-small-en-v1.5", request_model="bge-small:latest")
    http.embed_queries(["find me"])
    assert server.requests[-1] == {
        "model": "bge-small:latest",
        "input": ["Represent this sentence for searching relevant passages: find me"],
    }


def test_out_of_order_indices_are_sorted_back(server):
    server.mode = "reversed"
    vectors = embedder(server.endpoint).embed_documents(TEXTS)
    np.testing.assert_allclose(vectors, unit_rows(TEXTS, 384), rtol=1e-5)


def test_large_inputs_are_sent_in_batches(server):
    embedder(server.endpoint, batch_size=3).embed_documents(TEXTS * 2)
    assert sorted(len(r["input"]) for r in server.requests) == [2, 3, 3]


def test_usage_tokens_are_recorded(server):
    http = embedder(server.endpoint)
    http.embed_documents(TEXTS)
    assert http.last_stats.tokens == 7


def test_server_error_raises_with_status_and_message(server):
    server.mode = "error500"
    with pytest.raises(EmbeddingHTTPError, match="HTTP 500: model crashed") as info:
        embedder(server.endpoint).embed_documents(TEXTS)
    assert info.value.status == 500


def test_garbage_body_raises_a_response_error(server):
    server.mode = "garbage"
    with pytest.raises(EmbeddingResponseError, match="invalid JSON"):
        embedder(server.endpoint).embed_documents(TEXTS)


def test_missing_rows_raise_a_response_error(server):
    server.mode = "short"
    with pytest.raises(EmbeddingResponseError, match="indices"):
        embedder(server.endpoint).embed_documents(TEXTS)


def test_slow_server_times_out_as_unavailable(server):
    server.mode = "slow"
    with pytest.raises(EndpointUnavailable, match="did not answer within 0.3s"):
        embedder(server.endpoint, timeout_s=0.3).embed_documents(TEXTS)


def test_refused_connection_is_unavailable():
    with pytest.raises(EndpointUnavailable, match="unreachable"):
        embedder(closed_port_endpoint()).embed_documents(TEXTS)


def test_probe_learns_the_dimension_of_an_unknown_model(server):
    server.dim = 96
    http = embedder(server.endpoint, "acme/unknown-embedder")
    assert (http.dim, http.probe(), http.dim) == (0, 96, 96)


def test_probe_rejects_a_dimension_that_contradicts_the_model(server):
    server.dim = 768
    with pytest.raises(Exception, match="768-d"):
        embedder(server.endpoint).probe()


@pytest.mark.parametrize(
    "endpoint",
    ["http://h:1", "http://h:1/", "http://h:1/v1", "http://h:1/v1/embeddings"],
)
def test_endpoint_may_be_given_with_or_without_the_api_path(endpoint):
    assert embeddings_url(endpoint) == "http://h:1/v1/embeddings"
