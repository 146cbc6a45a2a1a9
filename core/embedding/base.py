"""The embedding interface and what every runtime shares.

All runtimes (torch_runtime, mlx_runtime, http_runtime) share `BatchedEmbedder`: prefixes
from the model spec, length-sorted batches (less padding), original order restored,
L2-normalised float32 rows, progress and per-call stats. A runtime only says how long a
text is and how to embed one batch.
"""

from __future__ import annotations

import logging
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from core.embedding.models import ModelSpec
from core.progress import Progress, ProgressSnapshot

_LOG = logging.getLogger("rag.embedding")

# Texts per forward pass. On CPU, bigger batches only add memory (attention grows with
# batch x length^2) and ran 10% slower at 64 than at 32 (figures in embedding.py);
# accelerators keep gaining up to a few hundred.
DEFAULT_BATCH_SIZES = {"torch-cpu": 64, "torch-cuda": 128, "mlx": 256, "http": 64}
# Padded token positions per forward pass; 0 = batches of `batch_size` texts whatever their
# length. On CPU, small batches of long texts keep the activations in cache: MiniLM on the
# 2-core dev box ran 512 real chunks (mean 223 tokens) at 6,100 tokens/s in batches of 32
# texts and at 7,100-7,200 with 8 texts or a 2,048-token budget; short texts still batch
# up to `batch_size` under the same budget.
DEFAULT_BATCH_TOKENS = {"torch-cpu": 2048, "torch-cuda": 0, "mlx": 0, "http": 0}


class EmbeddingError(RuntimeError):
    """Embedding failed; the message says which model, runtime or endpoint."""


class RuntimeUnavailable(EmbeddingError):
    """The requested runtime's packages are not installed on this machine."""


class EmbeddingEndpointError(EmbeddingError):
    """The HTTP endpoint answered, but not with usable embeddings."""


class EndpointUnavailable(EmbeddingEndpointError):
    """The HTTP endpoint could not be reached (refused, timed out, gateway error)."""


class EmbeddingHTTPError(EmbeddingEndpointError):
    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class EmbeddingResponseError(EmbeddingEndpointError):
    """The endpoint's answer is not the OpenAI embeddings shape."""


# Called after each model batch with the input positions and their (normalised) vectors, so
# a caller can keep what is done before the whole call returns (the embedding cache does).
BatchCallback = Callable[[list[int], np.ndarray], None]


@runtime_checkable
class Embedder(Protocol):
    model_id: str  # canonical: equal for every runtime of one model
    dim: int
    runtime: str  # "onnx" | "torch" | "mlx" | "http"
    precision: str  # "fp32" | "bf16" | "int8" | "fp16" (core/embedding/precision.py)
    notes: list[str]  # e.g. that this embedder is a fallback for a dead endpoint

    def embed_documents(
        self, texts: list[str], *, on_batch: BatchCallback | None = None
    ) -> np.ndarray: ...

    def embed_queries(self, texts: list[str]) -> np.ndarray: ...


@dataclass
class EmbedStats:
    """One embed call, for benchmarks: `padded_tokens - tokens` is compute spent on padding."""

    texts: int = 0
    tokens: int = 0
    padded_tokens: int = 0
    truncated: int = 0  # texts longer than the model's max_length
    batches: int = 0
    seconds: float = 0.0

    @property
    def texts_per_s(self) -> float:
        return self.texts / self.seconds if self.seconds > 0 else 0.0

    @property
    def tokens_per_s(self) -> float:
        return self.tokens / self.seconds if self.seconds > 0 else 0.0

    @property
    def padding_waste(self) -> float:
        """Share of the computed positions that were padding."""
        return 1.0 - self.tokens / self.padded_tokens if self.padded_tokens else 0.0

    def add(self, other: EmbedStats) -> None:
        self.texts += other.texts
        self.tokens += other.tokens
        self.padded_tokens += other.padded_tokens
        self.truncated += other.truncated
        self.batches += other.batches
        self.seconds += other.seconds


@dataclass(frozen=True)
class BatchResult:
    vectors: np.ndarray  # (len(batch), dim), not necessarily normalised
    tokens: int  # real tokens, special tokens included
    padded_tokens: int


class BatchedEmbedder(ABC):
    """The shared half of every runtime. Subclasses implement `_embed_batch`."""

    runtime = "base"
    precision = "fp32"  # a runtime that runs a lower one sets it when it loads

    def __init__(
        self,
        spec: ModelSpec,
        *,
        dim: int,
        batch_size: int,
        batch_tokens: int = 0,
        model_id: str | None = None,
        on_progress: Callable[[ProgressSnapshot], None] | None = None,
    ) -> None:
        if batch_size <= 0:
            raise ValueError(f"batch_size must be positive, got {batch_size}")
        if batch_tokens < 0:
            raise ValueError(f"batch_tokens must be 0 or positive, got {batch_tokens}")
        self.spec = spec
        self.model_id = model_id or spec.model_id
        self.dim = dim
        self.batch_size = batch_size
        self.batch_tokens = batch_tokens
        self.max_length = spec.max_length
        self.on_progress = on_progress
        self.notes: list[str] = []
        self.last_stats = EmbedStats()
        self.total_stats = EmbedStats()

    def embed_documents(
        self, texts: list[str], *, on_batch: BatchCallback | None = None
    ) -> np.ndarray:
        return self._embed(
            [self.spec.document_prefix + t for t in texts], "documents", on_batch=on_batch
        )

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        return self._embed([self.spec.query_prefix + t for t in texts], "queries")

    def embed_unprefixed(self, texts: list[str]) -> np.ndarray:
        """The texts exactly as given, no prefix: what an embedding server computes for its
        clients, which add the document or query prefix themselves (HTTPEmbedder)."""
        return self._embed(list(texts), "texts")

    def _embed(
        self, texts: list[str], kind: str, *, on_batch: BatchCallback | None = None
    ) -> np.ndarray:
        started = time.perf_counter()
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        stats = EmbedStats(texts=len(texts))
        lengths = self._lengths(texts)
        if self._lengths_are_tokens:
            stats.truncated = sum(n > self.max_length for n in lengths)
        # Longest first, like sentence-transformers: an out-of-memory batch fails at once,
        # and neighbours in the order have similar lengths, so batches carry little padding.
        order = sorted(range(len(texts)), key=lambda i: -lengths[i])
        progress = Progress(
            len(texts), f"embed {kind} [{self.runtime}]", on_update=self.on_progress
        )
        for idx in self._batches(order, lengths):
            result = self._embed_batch([texts[i] for i in idx])
            out[idx] = self._check_batch(result.vectors, len(idx))
            if on_batch is not None:
                on_batch(idx, l2_normalize(out[idx]))
            stats.tokens += result.tokens
            stats.padded_tokens += result.padded_tokens
            stats.batches += 1
            progress.advance(len(idx), tokens=result.tokens)
        if texts:
            progress.done()
        stats.seconds = time.perf_counter() - started
        self.last_stats = stats
        self.total_stats.add(stats)
        return l2_normalize(out)

    def _batches(self, order: list[int], lengths: list[int]) -> list[list[int]]:
        """Consecutive runs of `order` (longest text first): at most `batch_size` texts, and
        with a token budget, at most `batch_tokens` padded positions (a batch pads to its
        first, longest text). A text longer than the budget goes alone."""
        if not (self.batch_tokens and self._lengths_are_tokens):
            return [order[s : s + self.batch_size] for s in range(0, len(order), self.batch_size)]
        batches: list[list[int]] = []
        start = 0
        while start < len(order):
            longest = min(max(lengths[order[start]], 1), self.max_length)
            size = max(1, min(self.batch_size, self.batch_tokens // longest))
            batches.append(order[start : start + size])
            start += size
        return batches

    def _check_batch(self, vectors: np.ndarray, n: int) -> np.ndarray:
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.shape != (n, self.dim):
            raise EmbeddingError(
                f"{self.runtime} runtime of {self.model_id} returned shape {vectors.shape}, "
                f"expected ({n}, {self.dim})"
            )
        return vectors

    # Overridden by runtimes that can count tokens; characters are a fair proxy otherwise.
    _lengths_are_tokens = False

    def _lengths(self, texts: list[str]) -> list[int]:
        return [len(t) for t in texts]

    @abstractmethod
    def _embed_batch(self, texts: list[str]) -> BatchResult:
        """Vectors (unnormalised is fine) and token counts of one batch, in input order."""


def l2_normalize(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit: np.ndarray = (vectors / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)
    return unit


def pool_hidden(xp: Any, hidden: Any, mask: Any, mode: str) -> Any:
    """Pool token states (batch, seq, dim) to (batch, dim) with numpy or mlx.core as `xp`.

    Written against the API numpy and MLX share, so the MLX path's pooling is tested on
    Linux with numpy. Assumes right padding (all our tokenizers pad on the right).
    """
    mask = mask.astype(hidden.dtype)
    if mode == "cls":
        return hidden[:, 0]
    if mode == "mean":
        summed = (hidden * mask[:, :, None]).sum(axis=1)
        return summed / xp.maximum(mask.sum(axis=1)[:, None], 1e-9)
    if mode == "max":
        return xp.where(mask[:, :, None] > 0, hidden, -1e9).max(axis=1)
    if mode == "lasttoken":
        last = mask.sum(axis=1).astype(xp.int32) - 1
        return hidden[xp.arange(hidden.shape[0]), last]
    raise ValueError(f"unknown pooling mode {mode!r}")


class TokenLengths:
    """Token counts from the model's tokenizer.json, to sort batches by real length."""

    def __init__(self, model_dir: Path) -> None:
        from core.tokens import TokenCounter, TokenizerNotFound, counter_for_model

        self._counter: TokenCounter | None
        try:
            self._counter = counter_for_model(str(model_dir))
        except TokenizerNotFound:
            self._counter = None

    @property
    def available(self) -> bool:
        return self._counter is not None

    def __call__(self, texts: list[str], special_tokens: int) -> list[int]:
        assert self._counter is not None
        return [n + special_tokens for n in self._counter.count_many(texts)]
