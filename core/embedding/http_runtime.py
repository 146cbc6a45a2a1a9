"""The HTTP runtime: an OpenAI-compatible `POST /v1/embeddings` server."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from core.embedding.base import (
    DEFAULT_BATCH_SIZES,
    BatchCallback,
    BatchedEmbedder,
    BatchResult,
    EmbeddingEndpointError,
    EmbeddingHTTPError,
    EmbeddingResponseError,
    EndpointUnavailable,
)
from core.embedding.models import ModelSpec
from core.http_client import JSONClient, ServiceError, bearer
from core.progress import ProgressSnapshot

_LOG = logging.getLogger("rag.embedding")


class HTTPEmbedder(BatchedEmbedder):
    """An OpenAI-compatible `POST /v1/embeddings` server (Ollama, LM Studio, vLLM, TEI...).

    Prefixes are applied here, not by the server: OpenAI-shaped servers pass input through
    untouched, and the local runtimes must produce the same vectors for the same model.
    A `token` goes with every request as `Authorization: Bearer <token>` (OpenAI's API key).
    """

    runtime = "http"

    def __init__(
        self,
        endpoint: str,
        spec: ModelSpec,
        *,
        request_model: str | None = None,
        token: str | None = None,
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
        self._client = JSONClient(headers=bearer(token))

    def probe(self) -> int:
        """One tiny request: proves the server is up and learns (or checks) the dimension."""
        vectors, _ = self._request(["dimension probe"])
        dim = vectors.shape[1]
        if self.dim and dim != self.dim:
            raise EmbeddingEndpointError(
                f"{self.url} returns {dim}-d vectors for {self.request_model!r}, "
                f"but {self.model_id} is {self.dim}-d"
            )
        self.dim = int(dim)
        return self.dim

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
        payload = {"model": self.request_model, "input": texts}
        try:
            reply = self._client.post(self.url, payload, timeout_s=self.timeout_s)
        except ServiceError as exc:
            raise _embedding_error(exc) from exc
        return parse_embeddings_response(reply, len(texts), self.url)

    def close(self) -> None:
        """Let go of the pooled connections to the server."""
        self._client.close()


def embeddings_url(endpoint: str) -> str:
    """`{endpoint}/v1/embeddings`, tolerating endpoints given with `/v1` or the full path."""
    base = endpoint.rstrip("/")
    if base.endswith("/v1/embeddings"):
        return base
    if base.endswith("/v1"):
        return base + "/embeddings"
    return base + "/v1/embeddings"


def _embedding_error(exc: ServiceError) -> EmbeddingEndpointError:
    if exc.kind == "bad_response":
        return EmbeddingResponseError(str(exc))
    # Gateways answer 502-504 when the model server behind them is down: that is "down".
    if exc.kind == "http" and exc.status not in (502, 503, 504):
        return EmbeddingHTTPError(str(exc), exc.status or 0)
    return EndpointUnavailable(str(exc))


def parse_embeddings_response(payload: Any, expected: int, url: str) -> tuple[np.ndarray, int]:
    """Rows in input order from `{"data": [{"index": i, "embedding": [...]}]}` (a decoded
    reply), and tokens."""
    data = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(data, list):
        raise EmbeddingResponseError(f"{url} returned no 'data' list: {str(payload)[:120]}")
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
