"""The MLX runtime (Apple Silicon only): same model id and near-identical vectors to torch."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("mlx_embeddings", reason="mlx-embeddings runs on macOS arm64 only")

from core.embedding.mlx_runtime import MLXEmbedder
from core.embedding.models import model_spec  # noqa: E402
from core.embedding.torch_runtime import TorchEmbedder  # noqa: E402
from tests.support.models import default_model_dir  # noqa: E402

pytestmark = pytest.mark.slow

TEXTS = ["def add(a, b): return a + b", "How do I rotate TLS certificates?", "x"]


def test_mlx_matches_torch_for_the_packaged_minilm():
    path = default_model_dir()
    mlx = MLXEmbedder(path, model_spec(path))
    torch = TorchEmbedder(path, model_spec(path), device="cpu")
    assert (mlx.runtime, mlx.model_id, mlx.dim) == ("mlx", torch.model_id, 384)
    a, b = mlx.embed_documents(TEXTS), torch.embed_documents(TEXTS)
    np.testing.assert_allclose(np.sum(a * b, axis=1), 1.0, atol=1e-3)


def test_mlx_fp16_stays_within_the_quality_guard_of_fp32_on_tiny_inputs():
    path = default_model_dir()
    fp32 = MLXEmbedder(path, model_spec(path))
    fp16 = MLXEmbedder(path, model_spec(path), precision="fp16")
    assert (fp16.precision, fp16.dim) == ("fp16", fp32.dim)
    cosines = np.sum(fp32.embed_documents(TEXTS) * fp16.embed_documents(TEXTS), axis=1)
    assert cosines.min() >= 0.98
