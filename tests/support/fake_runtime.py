"""A tiny deterministic runtime: the shared batching code without a real model."""

from __future__ import annotations

import hashlib

import numpy as np

from core.embedding.base import BatchedEmbedder, BatchResult
from core.embedding.models import ModelSpec


def text_vector(text: str, dim: int) -> np.ndarray:
    """A fixed pseudo-random vector per text, deliberately not unit length."""
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
    return np.random.default_rng(seed).normal(size=dim).astype(np.float32) * 3.0


class FakeEmbedder(BatchedEmbedder):
    """Embeds by hashing; records every batch it was given. Length = words."""

    runtime = "fake"
    _lengths_are_tokens = True

    def __init__(
        self,
        spec: ModelSpec | None = None,
        *,
        dim: int = 8,
        batch_size: int = 4,
        batch_tokens: int = 0,
    ):
        spec = spec or ModelSpec(model_id="fake/model", dim=dim, max_length=6)
        super().__init__(spec, dim=dim, batch_size=batch_size, batch_tokens=batch_tokens)
        self.batches: list[list[str]] = []

    def _lengths(self, texts: list[str]) -> list[int]:
        return [len(t.split()) for t in texts]

    def _embed_batch(self, texts: list[str]) -> BatchResult:
        self.batches.append(list(texts))
        lengths = [min(len(t.split()), self.max_length) for t in texts]
        return BatchResult(
            vectors=np.stack([text_vector(t, self.dim) for t in texts]),
            tokens=sum(lengths),
            padded_tokens=len(texts) * max(lengths),
        )

    @property
    def embedded_texts(self) -> list[str]:
        return [t for batch in self.batches for t in batch]
