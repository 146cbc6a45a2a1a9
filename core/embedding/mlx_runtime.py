"""The MLX runtime (Apple Silicon): mlx-embeddings, pooled like sentence-transformers."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from core.embedding.base import (
    DEFAULT_BATCH_SIZES,
    BatchedEmbedder,
    BatchResult,
    RuntimeUnavailable,
    TokenLengths,
    pool_hidden,
)
from core.embedding.library_output import library_output
from core.embedding.models import ModelSpec
from core.progress import ProgressSnapshot

_LOG = logging.getLogger("rag.embedding")


class MLXEmbedder(BatchedEmbedder):
    """mlx-embeddings on Apple Silicon. Pools per the spec from the last hidden state."""

    runtime = "mlx"

    def __init__(
        self,
        model_dir: str | Path,
        spec: ModelSpec,
        *,
        batch_size: int = 0,
        on_progress: Callable[[ProgressSnapshot], None] | None = None,
        library_logs: bool = False,
        precision: str = "fp32",
    ) -> None:
        if precision not in ("fp32", "fp16"):
            raise RuntimeUnavailable(f"the mlx runtime runs fp32 or fp16, not {precision}")
        try:
            import mlx.core as mx
            from mlx_embeddings.utils import load
        except ImportError as exc:
            raise RuntimeUnavailable(
                "the mlx runtime needs mlx and mlx-embeddings, which rag-retrieve's install "
                "brings on macOS on Apple Silicon only"
            ) from exc
        self._mx = mx
        self.model_dir = Path(model_dir)
        # A local directory never triggers a download in mlx_embeddings.get_model_path.
        with library_output(library_logs):
            self._model, self._tokenizer = load(str(self.model_dir))
        if precision == "fp16":
            # Weights in fp16 halve what the GPU reads per token; pooling and normalisation
            # run on the fp32 cast of the last hidden state (_embed_batch).
            self._model.set_dtype(mx.float16)
        self.precision = precision
        dim = spec.dim or self._probe_dim()
        super().__init__(
            spec,
            dim=dim,
            batch_size=batch_size or DEFAULT_BATCH_SIZES["mlx"],
            on_progress=on_progress,
        )
        self._token_lengths = TokenLengths(self.model_dir)
        self._lengths_are_tokens = self._token_lengths.available

    def _lengths(self, texts: list[str]) -> list[int]:
        if self._token_lengths.available:
            return self._token_lengths(texts, 2)
        return super()._lengths(texts)

    def _probe_dim(self) -> int:
        hidden = self._forward(["dimension probe"], max_length=16)[0]
        return int(hidden.shape[-1])

    def _forward(self, texts: list[str], max_length: int) -> tuple[Any, np.ndarray]:
        enc = self._tokenizer(
            texts, padding=True, truncation=True, max_length=max_length, return_tensors="np"
        )
        mask = np.asarray(enc["attention_mask"])
        out = self._model(self._mx.array(enc["input_ids"]), attention_mask=self._mx.array(mask))
        return out.last_hidden_state, mask

    def _embed_batch(self, texts: list[str]) -> BatchResult:
        mx = self._mx
        hidden, mask = self._forward(texts, self.max_length)
        # fp16 sums of up to 512 token states lose digits: pool in fp32 whatever the weights.
        pooled = pool_hidden(mx, hidden.astype(mx.float32), mx.array(mask), self.spec.pooling)
        mx.eval(pooled)
        return BatchResult(
            vectors=np.array(pooled.astype(mx.float32)),
            tokens=int(mask.sum()),
            padded_tokens=int(mask.size),
        )
