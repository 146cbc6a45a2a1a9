"""The MLX runtime (Apple Silicon): the BERT encoder's forward pass in MLX
(core/embedding/mlx_bert.py) on the model's fast tokenizer, pooled like
sentence-transformers."""

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
from core.embedding.models import ModelSpec
from core.embedding.onnx_runtime import load_tokenizer
from core.progress import ProgressSnapshot

_LOG = logging.getLogger("rag.embedding")


class MLXEmbedder(BatchedEmbedder):
    """A BERT encoder in MLX on Apple Silicon. Pools per the spec from the last hidden state."""

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
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise RuntimeUnavailable(
                "the mlx runtime needs mlx, which rag-retrieve's install brings on macOS on "
                "Apple Silicon only"
            ) from exc
        from core.embedding.mlx_bert import MLXBert

        self._mx = mx
        self.model_dir = Path(model_dir)
        self._tokenizer = load_tokenizer(Tokenizer, self.model_dir, spec.max_length)
        # Weights in fp16 halve what the GPU reads per token; pooling and normalisation run on
        # the fp32 cast of the last hidden state (_embed_batch).
        self._model = MLXBert(self.model_dir, mx.float16 if precision == "fp16" else mx.float32)
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
        mx = self._mx
        encodings = self._tokenizer.encode_batch(texts)
        ids, mask, types = (
            np.array([getattr(e, field)[:max_length] for e in encodings], dtype=np.int32)
            for field in ("ids", "attention_mask", "type_ids")
        )
        return self._model(mx.array(ids), mx.array(mask), mx.array(types)), mask

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
