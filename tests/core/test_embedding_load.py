"""load_embedder: runtime choice, endpoint fallback to the same model, and refusals."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest

from core.embedding.base import RuntimeUnavailable
from core.embedding.models import ModelNotFound
from core.embedding.runtimes import (
    EmbeddingConfigError,
    FallbackRefused,
    kept_embedders,
    load_embedder,
)
from core.settings import Settings
from tests.fixtures.embedding.openai_server import closed_port_endpoint, running_server
from tests.support.models import default_model_dir

MINILM = "sentence-transformers/all-MiniLM-L6-v2"


def settings(**changes) -> Settings:
    return Settings(embedding_model=default_model_dir()).with_(**changes)


def test_http_runtime_without_endpoint_is_a_config_error():
    with pytest.raises(EmbeddingConfigError, match="EMBEDDING_ENDPOINT"):
        load_embedder(settings(embedding_runtime="http"))


def test_live_endpoint_serves_the_same_model_id_as_the_local_runtime():
    with running_server(dim=384) as server:
        embedder = load_embedder(
            settings(embedding_endpoint=server.endpoint, embedding_endpoint_model="all-minilm")
        )
    assert (embedder.runtime, embedder.model_id, embedder.dim) == ("http", MINILM, 384)
    assert embedder.notes == []


def test_live_endpoint_may_serve_another_model():
    with running_server(dim=1024) as server:
        embedder = load_embedder(
            settings(embedding_endpoint=server.endpoint, embedding_endpoint_model="BAAI/bge-m3")
        )
    assert (embedder.runtime, embedder.model_id, embedder.dim) == ("http", "BAAI/bge-m3", 1024)


@pytest.mark.slow
def test_dead_endpoint_falls_back_to_the_local_runtime_of_the_same_model(caplog):
    endpoint = closed_port_endpoint()
    with caplog.at_level(logging.WARNING, logger="rag.embedding"):
        embedder = load_embedder(
            settings(embedding_endpoint=endpoint, embedding_endpoint_model="all-minilm")
        )
    assert (embedder.runtime, embedder.model_id) == ("onnx", MINILM)
    assert len(embedder.notes) == 1 and endpoint in embedder.notes[0]
    assert any(endpoint in m and "local onnx runtime" in m for m in caplog.messages)
    assert embedder.embed_queries(["still works"]).shape == (1, 384)


def test_dead_endpoint_of_another_model_refuses_to_fall_back():
    with pytest.raises(FallbackRefused, match="BAAI/bge-m3"):
        load_embedder(
            settings(
                embedding_endpoint=closed_port_endpoint(), embedding_endpoint_model="BAAI/bge-m3"
            )
        )


def test_missing_model_path_is_model_not_found_naming_it(tmp_path):
    missing = tmp_path / "no-such-model"
    with pytest.raises(ModelNotFound, match=str(missing)):
        load_embedder(settings(embedding_runtime="torch", embedding_model=str(missing)))


def test_mlx_runtime_without_mlx_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "mlx", None)  # as on a machine without it: ImportError
    monkeypatch.setitem(sys.modules, "mlx.core", None)
    with pytest.raises(RuntimeUnavailable, match="needs mlx"):
        load_embedder(settings(embedding_runtime="mlx"))


def test_inside_kept_embedders_a_model_setup_is_loaded_once():
    with running_server(dim=384) as server:
        endpoint = settings(
            embedding_endpoint=server.endpoint, embedding_endpoint_model="all-minilm"
        )
        with kept_embedders():
            first = load_embedder(endpoint)
            again = load_embedder(endpoint.with_(library_logs=True))  # not a model setting
        probes = len(server.requests)
    assert again is first
    assert probes == 1


def test_kept_embedders_keeps_one_embedder_per_model_setup():
    with running_server(dim=384) as server:
        endpoint = settings(
            embedding_endpoint=server.endpoint, embedding_endpoint_model="all-minilm"
        )
        with kept_embedders():
            default_batch = load_embedder(endpoint)
            other_batch = load_embedder(endpoint.with_(embedding_batch_size=8))
    assert other_batch is not default_batch
    assert default_batch.batch_size != other_batch.batch_size == 8


def test_after_kept_embedders_each_load_loads_again():
    with running_server(dim=384) as server:
        endpoint = settings(
            embedding_endpoint=server.endpoint, embedding_endpoint_model="all-minilm"
        )
        with kept_embedders():
            kept = load_embedder(endpoint)
        assert load_embedder(endpoint) is not kept
        assert load_embedder(endpoint) is not load_embedder(endpoint)


def bare_checkout(into: Path) -> Path:
    """The default model's files without the sentence-transformers ones that say how it
    pools, under a name the registry does not know: a bare Hugging Face checkout."""
    into.mkdir()
    for name in ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json",
                 "special_tokens_map.json", "vocab.txt"):  # fmt: skip
        (into / name).symlink_to(Path(default_model_dir()) / name)
    return into


@pytest.mark.slow
def test_a_model_whose_files_do_not_say_how_it_pools_is_loaded_with_a_warning(tmp_path, caplog):
    model = bare_checkout(tmp_path / "my-encoder")
    with caplog.at_level(logging.WARNING, logger="rag.embedding"):
        embedder = load_embedder(
            settings(embedding_model=str(model), model_cache_dir=tmp_path / "cache")
        )
    assert embedder.embed_queries(["still works"]).shape == (1, 384)
    assert any(str(model) in m and "how it pools" in m for m in caplog.messages)


def test_a_model_whose_files_say_how_it_pools_loads_without_that_warning(tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="rag.embedding"):
        load_embedder(settings(model_cache_dir=tmp_path / "cache"))
    assert not any("how it pools" in m for m in caplog.messages)
