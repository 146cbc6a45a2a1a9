"""The onnx runtime: the packaged all-MiniLM-L6-v2's graph built once, embedding as torch
does, cached by the model files' fingerprint, loaded without torch, and refused (torch
instead) where the graph cannot cover the model."""

from __future__ import annotations

import logging
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from core.embedding.base import RuntimeUnavailable
from core.embedding.models import model_spec
from core.embedding.onnx_graph import fingerprint
from core.embedding.onnx_runtime import OnnxEmbedder
from core.embedding.runtimes import load_embedder
from core.embedding.torch_runtime import TorchEmbedder
from core.settings import Settings
from tests.support.models import default_model_dir
from tests.support.paths import ROOT

pytestmark = pytest.mark.slow

MINILM = Path(default_model_dir())
TEXTS = [
    "Observation framework: track changes to an @Observable model in SwiftUI.",
    "x",
    "func refreshToken() async throws -> Token { try await client.send(.refresh) }",
    " ".join(["A long passage about keyword and vector search in one index."] * 60),
    "Déjà vu: naïve café — ünïcödé and emoji 🚀 survive tokenisation.",
]


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("model-cache")


@pytest.fixture(scope="module")
def onnx(cache: Path) -> OnnxEmbedder:
    embedder = load_embedder(Settings(embedding_runtime="onnx", model_cache_dir=cache))
    assert isinstance(embedder, OnnxEmbedder)
    return embedder


@pytest.fixture(scope="module")
def torch_minilm() -> TorchEmbedder:
    return TorchEmbedder(MINILM, model_spec(MINILM), device="cpu")


def test_the_graph_embeds_documents_and_queries_as_torch_does(onnx, torch_minilm):
    assert (onnx.runtime, onnx.model_id, onnx.dim) == (
        "onnx",
        torch_minilm.model_id,
        torch_minilm.dim,
    )
    np.testing.assert_allclose(
        onnx.embed_documents(TEXTS), torch_minilm.embed_documents(TEXTS), atol=1e-5
    )
    np.testing.assert_allclose(
        onnx.embed_queries(TEXTS[:3]), torch_minilm.embed_queries(TEXTS[:3]), atol=1e-5
    )


def test_a_padded_batch_embeds_as_each_text_alone(onnx):
    together = onnx.embed_documents(TEXTS)
    alone = np.vstack([onnx.embed_documents([text]) for text in TEXTS])
    np.testing.assert_allclose(together, alone, atol=1e-5)
    assert onnx.last_stats.texts == 1 and onnx.total_stats.padded_tokens > 0


def test_auto_is_onnx_and_reuses_the_cached_graph(onnx, cache):
    [model_file] = (cache / "onnx").glob("*.onnx")
    written = model_file.stat().st_mtime_ns
    again = load_embedder(Settings(model_cache_dir=cache))
    assert again.runtime == "onnx"
    assert model_file.stat().st_mtime_ns == written
    assert not list((cache / "onnx").glob(".*partial"))


def test_a_process_that_only_asks_never_imports_torch(onnx, cache):
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from core.embedding.runtimes import load_embedder\n"
        "from core.settings import Settings\n"
        f"e = load_embedder(Settings(model_cache_dir=Path({str(cache)!r})))\n"
        "e.embed_queries(['find the key window'])\n"
        "print(e.runtime, sorted(m for m in ('torch', 'transformers', "
        "'sentence_transformers') if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.split("\n")[0] == "onnx []"


def test_a_changed_model_file_changes_the_fingerprint(tmp_path):
    model = tmp_path / "all-MiniLM-L6-v2"
    shutil.copytree(MINILM, model)
    before = fingerprint(model)
    (model / "config.json").write_text((model / "config.json").read_text() + "\n")
    assert fingerprint(model) != before


def uncovered_model(tmp_path: Path) -> Path:
    """The packaged model with an activation the graph does not lay out (transformers' BERT
    takes it, so torch still loads the same weights)."""
    model = tmp_path / "all-MiniLM-L6-v2"
    shutil.copytree(MINILM, model)
    config = (model / "config.json").read_text()
    (model / "config.json").write_text(config.replace('"gelu"', '"silu"'))
    return model


def test_asking_for_onnx_where_it_cannot_run_is_an_error(tmp_path):
    settings = Settings(
        embedding_runtime="onnx",
        embedding_model=str(uncovered_model(tmp_path)),
        model_cache_dir=tmp_path / "cache",
    )
    with pytest.raises(RuntimeUnavailable, match="silu"):
        load_embedder(settings)


def test_auto_stays_on_torch_when_the_graph_cannot_cover_the_model_and_says_why(tmp_path, caplog):
    settings = Settings(
        embedding_model=str(uncovered_model(tmp_path)), model_cache_dir=tmp_path / "cache"
    )
    with caplog.at_level(logging.WARNING, logger="rag.embedding"):
        embedder = load_embedder(settings)
    assert embedder.runtime == "torch"
    assert any("embedding with torch" in m and "silu" in m for m in caplog.messages)
    assert not list((tmp_path / "cache").rglob("*.onnx"))
    assert embedder.embed_queries(["still works"]).shape == (1, 384)
