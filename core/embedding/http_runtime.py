"""The HTTP runtime: an OpenAI-compatible `POST /v1/embeddings` server."""

from __future__ import annotations

import http.client
import json
import logging
import urllib.error
import urllib.request
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
from core.http_errors import error_detail
from core.progress import ProgressSnapshot

_LOG = logging.getLogger("rag.embedding")


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
                body: bytes = response.read()
                return body
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
