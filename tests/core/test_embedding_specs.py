"""Model specs: every way of naming a model reaches one canonical id and its settings."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.embedding.model_files import resolve_model_dir
from core.embedding.models import (
    BGE_QUERY_PREFIX,
    ModelNotFound,
    canonical_model_id,
    model_spec,
)
from core.embedding.runtimes import default_local_runtime
from tests.support import paths
from tests.support.models import default_model_dir

FIXTURES = paths.FIXTURES / "embedding"
MINILM = "sentence-transformers/all-MiniLM-L6-v2"


def test_packaged_minilm_dir_has_the_hub_id():
    assert canonical_model_id(default_model_dir()) == MINILM


@pytest.mark.parametrize(
    "name",
    [
        "sentence-transformers/all-MiniLM-L6-v2",
        "all-MiniLM-L6-v2",
        "all-minilm",  # Ollama
        "all-minilm:latest",
        "mlx-community/all-MiniLM-L6-v2-mlx",
    ],
)
def test_every_runtime_name_of_minilm_maps_to_one_id(name):
    assert canonical_model_id(name) == MINILM


def test_hf_cache_snapshot_dir_is_named_by_its_repo(tmp_path):
    snapshot = tmp_path / "models--BAAI--bge-m3" / "snapshots" / "5617a9f"
    snapshot.mkdir(parents=True)
    assert canonical_model_id(snapshot) == "BAAI/bge-m3"


@pytest.mark.parametrize(
    ("name", "other"),
    [
        ("bge-small-en-v1.5", "bge-base-en-v1.5"),
        ("BAAI/bge-base-en", "BAAI/bge-base-en-v1.5"),
        ("intfloat/e5-large-v2", "intfloat/multilingual-e5-large"),
        ("all-MiniLM-L6-v2", "mlx-community/all-MiniLM-L6-v2-4bit"),
        ("my-model", "my-model-2"),
    ],
)
def test_different_models_never_share_an_id(name, other):
    assert canonical_model_id(name) != canonical_model_id(other)


@pytest.mark.parametrize(
    ("name", "pooling", "dim", "query", "document"),
    [
        ("all-MiniLM-L6-v2", "mean", 384, "", ""),
        ("BAAI/bge-m3", "cls", 1024, "", ""),
        ("bge-small-en-v1.5", "cls", 384, BGE_QUERY_PREFIX, ""),
        ("BAAI/bge-large-en-v1.5", "cls", 1024, BGE_QUERY_PREFIX, ""),
        ("nomic-embed-text", "mean", 768, "search_query: ", "search_document: "),
        ("Snowflake/snowflake-arctic-embed-m", "cls", 768, BGE_QUERY_PREFIX, ""),
        ("intfloat/e5-base-v2", "mean", 768, "query: ", "passage: "),
        ("mxbai-embed-large", "cls", 1024, BGE_QUERY_PREFIX, ""),
    ],
)
def test_registered_models_carry_their_pooling_and_prefixes(name, pooling, dim, query, document):
    spec = model_spec(name)
    assert (spec.pooling, spec.dim, spec.query_prefix, spec.document_prefix) == (
        pooling,
        dim,
        query,
        document,
    )


def test_minilm_reads_whole_512_token_chunks():
    # The chunker emits up to 512 tokens; the native 256 would drop the tail of long chunks.
    assert model_spec(default_model_dir()).max_length == 512


def test_bge_m3_keeps_its_long_context():
    assert model_spec("BAAI/bge-m3").max_length == 8192


def test_unknown_model_dir_is_read_from_its_sentence_transformers_files():
    spec = model_spec(FIXTURES / "custom-embedder")
    assert spec.model_id == "custom-embedder"
    assert (spec.pooling, spec.dim, spec.max_length, spec.normalize) == ("cls", 256, 384, True)
    assert (spec.query_prefix, spec.document_prefix) == ("Find code for: ", "Code: ")


def test_bare_hf_dir_gets_mean_pooling_no_prefixes_and_at_most_512_tokens():
    spec = model_spec(FIXTURES / "bare-encoder")
    assert (spec.pooling, spec.dim, spec.max_length) == ("mean", 768, 512)
    assert (spec.query_prefix, spec.document_prefix, spec.normalize) == ("", "", False)


def test_missing_model_path_raises_model_not_found_naming_it(tmp_path):
    missing = tmp_path / "models" / "nowhere"
    with pytest.raises(ModelNotFound, match=str(missing)):
        resolve_model_dir(missing)


def test_unknown_model_name_outside_the_offline_cache_is_not_found():
    with pytest.raises(ModelNotFound, match="acme/embedder-x"):
        resolve_model_dir("acme/embedder-x")


def test_minilm_id_resolves_to_the_packaged_dir_without_network():
    assert resolve_model_dir(MINILM) == Path(default_model_dir())


@pytest.mark.parametrize(
    ("system", "machine", "mlx", "expected"),
    [
        ("Linux", "x86_64", True, "torch"),
        ("Linux", "aarch64", True, "torch"),
        ("Darwin", "x86_64", True, "torch"),
        ("Darwin", "arm64", False, "torch"),
        ("Darwin", "arm64", True, "mlx"),
    ],
)
def test_auto_picks_mlx_only_on_apple_silicon_with_mlx_installed(system, machine, mlx, expected):
    assert default_local_runtime(system, machine, mlx_importable=mlx) == expected
