"""The torch runtime on the packaged all-MiniLM-L6-v2, loaded offline once per module."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from core.embedding.base import Embedder
from core.embedding.models import model_spec
from core.embedding.torch_runtime import TorchEmbedder
from tests.support.models import default_model_dir

pytestmark = pytest.mark.slow

TEXTS = [
    "def binary_search(items, target): return bisect.bisect_left(items, target)",
    "Tokens",
    "The quick brown fox jumps over the lazy dog, again and again, until it is tired.",
    "SELECT id, name FROM users WHERE active = 1 ORDER BY created_at DESC LIMIT 10",
    "How do I configure TLS for the TiDB connection?",
    "x",
    " ".join(["a fairly long sentence about vector search and chunking"] * 8),
]


@pytest.fixture(scope="module")
def minilm() -> TorchEmbedder:
    path = default_model_dir()
    return TorchEmbedder(path, model_spec(path), device="cpu", batch_size=4)


def test_packaged_minilm_loads_offline_and_embeds_unit_384d_rows(minilm):
    vectors = minilm.embed_documents(TEXTS)
    assert isinstance(minilm, Embedder)
    assert (minilm.model_id, minilm.runtime, minilm.dim) == (
        "sentence-transformers/all-MiniLM-L6-v2",
        "torch",
        384,
    )
    assert vectors.shape == (len(TEXTS), 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)


def test_same_input_gives_the_same_vectors(minilm):
    np.testing.assert_array_equal(minilm.embed_documents(TEXTS), minilm.embed_documents(TEXTS))


def test_length_sorted_batches_match_embedding_one_by_one(minilm):
    shuffled = [TEXTS[i] for i in (3, 6, 1, 0, 5, 2, 4)]
    together = minilm.embed_documents(shuffled)
    alone = np.vstack([minilm.embed_documents([t]) for t in shuffled])
    np.testing.assert_allclose(together, alone, atol=1e-5)


def test_query_is_closest_to_the_relevant_passage(minilm):
    [query] = minilm.embed_queries(["how do I set up TLS for the database connection"])
    scores = minilm.embed_documents(TEXTS) @ query
    assert int(np.argmax(scores)) == 4


def test_tokens_past_256_still_shape_the_vector(minilm):
    # max_length is 512: a change at token ~300 must reach the vector.
    head = "word " * 300
    a, b = minilm.embed_documents([head + "kubernetes ingress", head + "sourdough bread"])
    assert float(a @ b) < 0.9999


def test_stats_show_real_and_padded_tokens_and_truncation(minilm):
    minilm.embed_documents(["short", "a much longer text with many more tokens", "word " * 600])
    stats = minilm.last_stats
    assert (stats.texts, stats.batches, stats.truncated) == (3, 1, 1)
    assert 512 < stats.tokens < stats.padded_tokens == 3 * 512


def bare_copy(tmp_path: Path, name: str) -> Path:
    """The packaged weights as a bare Hugging Face dir (no modules.json, no pooling config)."""
    src, bare = Path(default_model_dir()), tmp_path / name
    bare.mkdir()
    for f in ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"):
        (bare / f).symlink_to(src / f)
    return bare


def test_bare_hf_dir_of_an_unknown_model_is_mean_pooled(minilm, tmp_path):
    bare = bare_copy(tmp_path, "bare-minilm")
    vectors = TorchEmbedder(bare, model_spec(bare), device="cpu").embed_documents(TEXTS[:3])
    np.testing.assert_allclose(vectors, minilm.embed_documents(TEXTS[:3]), atol=1e-5)


def test_bare_hf_dir_of_a_cls_model_is_cls_pooled(minilm, tmp_path):
    # bge-small is 384-d like MiniLM, so MiniLM weights under its name load as a CLS model.
    bare = bare_copy(tmp_path, "bge-small-en-v1.5")
    embedder = TorchEmbedder(bare, model_spec(bare), device="cpu")
    cls = embedder.embed_documents(TEXTS[:3])
    assert embedder.model_id == "BAAI/bge-small-en-v1.5"
    assert np.abs(cls - minilm.embed_documents(TEXTS[:3])).max() > 0.1


@pytest.mark.parametrize("library_logs", [False, True])
def test_the_loading_bar_reaches_stderr_only_when_asked_for(library_logs, capfd):
    from transformers.utils import logging as hf_logging

    bars_before = hf_logging.is_progress_bar_enabled()
    path = default_model_dir()

    TorchEmbedder(path, model_spec(path), device="cpu", library_logs=library_logs)

    assert ("Loading weights" in capfd.readouterr().err) is library_logs
    assert hf_logging.is_progress_bar_enabled() is bars_before  # the library's state restored
