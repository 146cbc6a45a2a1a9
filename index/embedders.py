"""One embedding interface, three runtimes: torch (sentence-transformers), MLX, HTTP.

All runtimes share `BatchedEmbedder`: prefixes from the model spec, length-sorted batches
(less padding), original order restored, L2-normalised float32 rows, progress and
per-call stats. A runtime only says how long a text is and how to embed one batch.
"""

from __future__ import annotations

import http.client
import json
import logging
import time
import urllib.error
import urllib.request
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from index.http_errors import error_detail
from index.model_specs import ModelSpec
from index.progress import Progress, ProgressSnapshot

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
    runtime: str  # "torch" | "mlx" | "http"
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
    return (vectors / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)


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


class _TokenLengths:
    """Token counts from the model's tokenizer.json, to sort batches by real length."""

    def __init__(self, model_dir: Path) -> None:
        from index.tokens import TokenizerNotFound, counter_for_model

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


class TorchEmbedder(BatchedEmbedder):
    """sentence-transformers on CUDA when present, else CPU; loads only local files."""

    runtime = "torch"

    def __init__(
        self,
        model_dir: str | Path,
        spec: ModelSpec,
        *,
        device: str | None = None,
        batch_size: int = 0,
        batch_tokens: int | None = None,
        on_progress: Callable[[ProgressSnapshot], None] | None = None,
    ) -> None:
        try:
            import torch
        except ImportError as exc:
            raise RuntimeUnavailable(
                "the torch runtime needs torch and sentence-transformers: pip install -e '.[torch]'"
            ) from exc
        self._torch = torch
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.model_dir = Path(model_dir)
        self._model = _load_sentence_transformer(self.model_dir, spec, self.device)
        self._model.max_seq_length = spec.max_length
        dim = _st_dimension(self._model)
        if spec.dim is not None and dim != spec.dim:
            raise EmbeddingError(
                f"{self.model_dir} produces {dim}-d vectors but {spec.model_id} is {spec.dim}-d; "
                "is the directory named after the wrong model?"
            )
        kind = "torch-cuda" if self.device.startswith("cuda") else "torch-cpu"
        super().__init__(
            spec,
            dim=dim,
            batch_size=batch_size or DEFAULT_BATCH_SIZES[kind],
            batch_tokens=DEFAULT_BATCH_TOKENS[kind] if batch_tokens is None else batch_tokens,
            on_progress=on_progress,
        )
        self._token_lengths = _TokenLengths(self.model_dir)
        self._lengths_are_tokens = self._token_lengths.available
        self._specials = _special_token_count(self._model)

    def _lengths(self, texts: list[str]) -> list[int]:
        if self._token_lengths.available:
            return self._token_lengths(texts, self._specials)
        return super()._lengths(texts)

    def _embed_batch(self, texts: list[str]) -> BatchResult:
        from sentence_transformers.util import batch_to_device

        preprocess = getattr(self._model, "preprocess", None) or self._model.tokenize
        features = preprocess(texts)
        mask = features["attention_mask"]
        features = batch_to_device(features, self._model.device)
        with self._torch.inference_mode():
            out = self._model(features)["sentence_embedding"]
        return BatchResult(
            vectors=out.float().cpu().numpy(),
            tokens=int(mask.sum()),
            padded_tokens=int(mask.numel()),
        )


def _load_sentence_transformer(model_dir: Path, spec: ModelSpec, device: str) -> Any:
    from sentence_transformers import SentenceTransformer

    kwargs = {"device": device, "trust_remote_code": spec.trust_remote_code}
    if (model_dir / "modules.json").is_file():
        return SentenceTransformer(str(model_dir), local_files_only=True, **kwargs)
    # A bare Hugging Face directory: sentence-transformers would guess mean pooling,
    # which is wrong for CLS models (bge, arctic, mxbai). Build the pipeline from the spec.
    try:
        from sentence_transformers.sentence_transformer.modules import (
            Normalize,
            Pooling,
            Transformer,
        )
    except ImportError:  # sentence-transformers 5
        from sentence_transformers.models import Normalize, Pooling, Transformer

    transformer = Transformer(
        str(model_dir),
        max_seq_length=spec.max_length,
        model_kwargs={"local_files_only": True, "trust_remote_code": spec.trust_remote_code},
    )
    # Renamed in sentence-transformers 6; the old name still works in 5.
    get_dim = getattr(transformer, "get_embedding_dimension", None)
    dim = get_dim() if get_dim else transformer.get_word_embedding_dimension()
    return SentenceTransformer(
        modules=[transformer, Pooling(dim, spec.pooling), Normalize()], **kwargs
    )


def _st_dimension(model: Any) -> int:
    for name in ("get_embedding_dimension", "get_sentence_embedding_dimension"):
        method = getattr(model, name, None)
        if method is not None and (dim := method()):
            return int(dim)
    raise EmbeddingError("cannot tell the embedding dimension of the loaded model")


def _special_token_count(model: Any) -> int:
    try:
        return len(model.tokenizer("")["input_ids"])
    except Exception:  # a tokenizer without a plain call still embeds; 2 fits BERT/XLM-R
        return 2


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
    ) -> None:
        try:
            import mlx.core as mx
            from mlx_embeddings.utils import load
        except ImportError as exc:
            raise RuntimeUnavailable(
                "the mlx runtime needs mlx and mlx-embeddings (macOS on Apple Silicon): "
                "pip install -e '.[mlx]'"
            ) from exc
        self._mx = mx
        self.model_dir = Path(model_dir)
        # A local directory never triggers a download in mlx_embeddings.get_model_path.
        self._model, self._tokenizer = load(str(self.model_dir))
        dim = spec.dim or self._probe_dim()
        super().__init__(
            spec,
            dim=dim,
            batch_size=batch_size or DEFAULT_BATCH_SIZES["mlx"],
            on_progress=on_progress,
        )
        self._token_lengths = _TokenLengths(self.model_dir)
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
        pooled = pool_hidden(mx, hidden, mx.array(mask), self.spec.pooling)
        mx.eval(pooled)
        return BatchResult(
            vectors=np.array(pooled.astype(mx.float32)),
            tokens=int(mask.sum()),
            padded_tokens=int(mask.size),
        )


class HTTPEmbedder(BatchedEmbedder):
    """An OpenAI-compatible `POST /v1/embeddings` server (Ollama, LM Studio, vLLM, TEI...).

    Prefixes are applied here, not by the server: OpenAI-shaped servers pass input through
    untouched, and the local runtimes must produce the same vectors for the same model.
    """

    runtime = "http"

    def __init__(
        self,
        endpoint: str,
        spec: ModelSpec,
        *,
        request_model: str | None = None,
        timeout_s: float = 30.0,
        batch_size: int = 0,
        on_progress: Callable[[ProgressSnapshot], None] | None = None,
    ) -> None:
        super().__init__(
            spec,
            dim=spec.dim or 0,  # 0 until probe() asks the server
            batch_size=batch_size or DEFAULT_BATCH_SIZES["http"],
            on_progress=on_progress,
        )
        self.endpoint = endpoint
        self.url = embeddings_url(endpoint)
        self.request_model = request_model or spec.model_id
        self.timeout_s = timeout_s

    def probe(self) -> int:
        """One tiny request: proves the server is up and learns (or checks) the dimension."""
        vectors, _ = self._request(["dimension probe"])
        dim = vectors.shape[1]
        if self.dim and dim != self.dim:
            raise EmbeddingEndpointError(
                f"{self.url} returns {dim}-d vectors for {self.request_model!r}, "
                f"but {self.model_id} is {self.dim}-d"
            )
        self.dim = dim
        return dim

    def _embed(
        self, texts: list[str], kind: str, *, on_batch: BatchCallback | None = None
    ) -> np.ndarray:
        if not self.dim:
            self.probe()
        return super()._embed(texts, kind, on_batch=on_batch)

    def _embed_batch(self, texts: list[str]) -> BatchResult:
        vectors, tokens = self._request(texts)
        return BatchResult(vectors=vectors, tokens=tokens, padded_tokens=tokens)

    def _request(self, texts: list[str]) -> tuple[np.ndarray, int]:
        body = json.dumps({"model": self.request_model, "input": texts}).encode("utf-8")
        request = urllib.request.Request(
            self.url,
            data=body,
            method="POST",
            headers={"Content-Type": "application/json", "Accept": "application/json"},
        )
        raw = self._send(request)
        return parse_embeddings_response(raw, len(texts), self.url)

    def _send(self, request: urllib.request.Request) -> bytes:
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                return response.read()
        except urllib.error.HTTPError as exc:
            raise _http_error(self.url, exc) from exc
        except TimeoutError as exc:
            raise self._timeout() from exc
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, TimeoutError):  # timed out while connecting
                raise self._timeout() from exc
            raise EndpointUnavailable(f"{self.url} is unreachable: {exc.reason}") from exc
        except (ConnectionError, http.client.HTTPException) as exc:
            raise EndpointUnavailable(f"{self.url} dropped the connection: {exc}") from exc

    def _timeout(self) -> EndpointUnavailable:
        return EndpointUnavailable(f"{self.url} did not answer within {self.timeout_s:g}s")


def embeddings_url(endpoint: str) -> str:
    """`{endpoint}/v1/embeddings`, tolerating endpoints given with `/v1` or the full path."""
    base = endpoint.rstrip("/")
    if base.endswith("/v1/embeddings"):
        return base
    if base.endswith("/v1"):
        return base + "/embeddings"
    return base + "/v1/embeddings"


def _http_error(url: str, exc: urllib.error.HTTPError) -> EmbeddingEndpointError:
    detail = error_detail(exc)
    # Gateways answer 502-504 when the model server behind them is down: that is "down".
    if exc.code in (502, 503, 504):
        return EndpointUnavailable(f"{url} answered HTTP {exc.code}: {detail}")
    return EmbeddingHTTPError(f"{url} answered HTTP {exc.code}: {detail}", exc.code)


def parse_embeddings_response(raw: bytes, expected: int, url: str) -> tuple[np.ndarray, int]:
    """Rows in input order from `{"data": [{"index": i, "embedding": [...]}]}`, and tokens."""
    try:
        payload = json.loads(raw)
    except ValueError as exc:
        raise EmbeddingResponseError(f"{url} returned invalid JSON: {raw[:120]!r}") from exc
    data = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(data, list):
        raise EmbeddingResponseError(f"{url} returned no 'data' list: {raw[:120]!r}")
    try:
        items = sorted(data, key=lambda item: item["index"])
        indices = [item["index"] for item in items]
        rows = [item["embedding"] for item in items]
    except (TypeError, KeyError) as exc:
        raise EmbeddingResponseError(
            f"{url} returned items without 'index' and 'embedding': {exc}"
        ) from exc
    if indices != list(range(expected)):
        raise EmbeddingResponseError(f"{url} returned indices {indices[:10]} for {expected} inputs")
    vectors = _as_matrix(rows, url)
    usage = payload.get("usage")
    tokens = usage.get("prompt_tokens") if isinstance(usage, dict) else None
    return vectors, int(tokens) if isinstance(tokens, int) else 0


def _as_matrix(rows: Sequence[Any], url: str) -> np.ndarray:
    try:
        vectors = np.asarray(rows, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise EmbeddingResponseError(f"{url} returned embeddings that are not numbers") from exc
    if vectors.ndim != 2 or vectors.shape[1] == 0:
        raise EmbeddingResponseError(f"{url} returned embeddings of uneven or zero length")
    if not np.isfinite(vectors).all():
        raise EmbeddingResponseError(f"{url} returned NaN or infinite values")
    return vectors
