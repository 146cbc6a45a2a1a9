"""A test embedder: no model, so tests measure what they test, not one."""

from __future__ import annotations

import hashlib
import re

import numpy as np


class HashEmbedder:
    """Bag of words hashed into 64 dimensions: texts sharing words are close. Fast and
    deterministic, so the tests measure the evaluation, not a model."""

    model_id = "test/hash-bow"
    dim = 64
    notes: list[str] = []

    def _embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"[a-z0-9]+", text.lower()):
                out[row, int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dim] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1.0, norms)

    def embed_documents(self, texts: list[str], *, on_batch=None) -> np.ndarray:
        vectors = self._embed(texts)
        if on_batch is not None:
            on_batch(list(range(len(texts))), vectors)
        return vectors

    embed_queries = _embed
