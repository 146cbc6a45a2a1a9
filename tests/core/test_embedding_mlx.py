"""The MLX runtime: the BERT encoder's forward pass in MLX (core/embedding/mlx_bert.py) gives
the vectors ONNX Runtime gives for the same model. On Linux MLX runs on its CPU backend,
far slower than on an Apple GPU, so the inputs stay small."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip(
    "mlx.core", reason="mlx is installed on Apple Silicon and by the dev extra on Linux"
)

from core.embedding.mlx_runtime import MLXEmbedder  # noqa: E402
from core.embedding.models import model_spec  # noqa: E402
from core.embedding.onnx_graph import built_model  # noqa: E402
from core.embedding.onnx_runtime import OnnxEmbedder  # noqa: E402
from tests.support.models import default_model_dir  # noqa: E402

pytestmark = pytest.mark.slow

TEXTS = [
    "def add(a, b): return a + b",
    "How do I rotate TLS certificates?",
    "x",
    "A SwiftData model persists with a ModelContainer; CloudKit sync needs every property "
    "optional or defaulted, and no unique constraints, or the container refuses to load.",
]


@pytest.fixture(scope="module")
def onnx(tmp_path_factory):
    path = Path(default_model_dir())
    spec = model_spec(path)
    return OnnxEmbedder(built_model(path, spec, tmp_path_factory.mktemp("onnx")), path, spec)


def test_mlx_gives_the_onnx_runtimes_vectors_for_the_packaged_minilm(onnx):
    path = default_model_dir()
    mlx = MLXEmbedder(path, model_spec(path))

    assert (mlx.runtime, mlx.model_id, mlx.dim) == ("mlx", onnx.model_id, 384)
    cosines = np.sum(mlx.embed_documents(TEXTS) * onnx.embed_documents(TEXTS), axis=1)
    assert cosines.min() >= 0.99999
    query = np.sum(mlx.embed_queries(["persist a model"]) * onnx.embed_queries(["persist a model"]))
    assert query >= 0.99999


def test_mlx_fp16_stays_within_the_quality_guard_of_fp32_on_tiny_inputs():
    path = default_model_dir()
    fp32 = MLXEmbedder(path, model_spec(path))
    fp16 = MLXEmbedder(path, model_spec(path), precision="fp16")
    assert (fp16.precision, fp16.dim) == ("fp16", fp32.dim)
    cosines = np.sum(fp32.embed_documents(TEXTS) * fp16.embed_documents(TEXTS), axis=1)
    assert cosines.min() >= 0.98
