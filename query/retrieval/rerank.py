"""Cross-encoder reranking of fused candidates, local or over HTTP, within a time budget.

A `Reranker` scores (query, passage) pairs: `score(query, passages, budget_ms=...)` returns
one score per passage, or None for passages it did not reach in the budget. Passages are
scored in small batches and the clock is checked before each batch, so a slow CPU model or
server costs at most the budget plus one batch; the pipeline keeps unscored passages in
fused order below the scored ones.

Which reranker `load_reranker` picks:

1. `RERANKER_ENDPOINT` set: an HTTP reranker (the model runs elsewhere). The API is chosen
   from the URL path:
   - ends in `/v1/rerank` or `/v2/rerank`: Cohere/Jina style, `POST` there
     `{"model", "query", "documents", "top_n"}` → `{"results": [{"index",
     "relevance_score"}]}` (`model` is RAG_RERANKER_MODEL, sent only when set);
   - ends in `/rerank`: Text Embeddings Inference, `POST` there `{"query", "texts",
     "truncate": true}` → `[{"index", "score"}]`;
   - ends in `/v1`: Cohere/Jina style at `{endpoint}/rerank`;
   - anything else (a bare server URL): TEI `{endpoint}/rerank` first; if that route is
     missing or rejects the body (HTTP 404, 405, 400, 422), Cohere style at
     `{endpoint}/v1/rerank`. The API that answered is kept for later calls.
2. Else `RAG_RERANKER_MODEL` set: a sentence-transformers `CrossEncoder` on torch, loaded
   from a local directory or the offline Hugging Face cache (never downloaded). The model
   must be a sequence-classification model: a bi-encoder directory would load with a random
   head and score noise, so it is refused. MLX: there is no MLX cross-encoder path here; on
   Apple Silicon the torch model runs (on MPS when torch has it) and a note says so.
3. Neither: no reranker; the pipeline keeps the fused order and says so.
"""

from __future__ import annotations

import json
import math
import platform
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

from core.http_client import JSONClient, ServiceError
from core.settings import Settings

LOCAL_BATCH = 8  # small, so the budget check between batches is fine-grained on a CPU
HTTP_BATCH = 32  # TEI's default --max-client-batch-size
NOT_CONFIGURED = "no reranker configured; fused order kept"
_FALLBACK_STATUSES = (400, 404, 405, 422)


class RerankerUnavailable(RuntimeError):
    """The reranker could not score (down, HTTP error, malformed reply)."""


class _OutOfTime(Exception):
    """A batch did not finish within the remaining budget."""


class Reranker(Protocol):
    name: str

    def score(
        self, query: str, passages: Sequence[str], *, budget_ms: int
    ) -> list[float | None]: ...


def score_in_batches(
    passages: Sequence[str],
    budget_ms: int,
    batch_size: int,
    score_batch: Callable[[list[str], float], list[float | None]],
    clock: Callable[[], float] = time.monotonic,
) -> list[float | None]:
    """Scores of `passages` batch by batch until the budget is spent; None for the rest.
    `score_batch(batch, seconds_left)` may raise _OutOfTime to give up on its batch."""
    deadline = clock() + budget_ms / 1000.0
    scores: list[float | None] = [None] * len(passages)
    for start in range(0, len(passages), max(1, batch_size)):
        left = deadline - clock()
        if left <= 0:
            break
        batch = list(passages[start : start + batch_size])
        try:
            got = score_batch(batch, left)
        except _OutOfTime:
            break
        scores[start : start + len(batch)] = got
    return scores


# Local cross-encoder


class CrossEncoderReranker:
    """A sentence-transformers CrossEncoder (torch), scored LOCAL_BATCH pairs at a time."""

    def __init__(self, model: Any, name: str, batch_size: int = LOCAL_BATCH) -> None:
        self.model = model
        self.name = name
        self.batch_size = batch_size

    def score(self, query: str, passages: Sequence[str], *, budget_ms: int) -> list[float | None]:
        def run(batch: list[str], _left: float) -> list[float | None]:
            raw = self.model.predict(
                [(query, p) for p in batch],
                batch_size=len(batch),
                show_progress_bar=False,
                convert_to_numpy=True,
            )
            return [float(s) for s in _flat(raw)]

        return score_in_batches(passages, budget_ms, self.batch_size, run)


def _flat(raw: Any) -> list[Any]:
    # Single-label models give shape (n,); a model with one logit per row may give (n, 1).
    values = raw.tolist() if hasattr(raw, "tolist") else list(raw)
    return [v[0] if isinstance(v, list) else v for v in values]


def load_cross_encoder(model: str) -> CrossEncoderReranker:
    """The CrossEncoder at `model` (a directory, or a hub id in the offline cache)."""
    from core.embedding.model_files import resolve_model_dir
    from core.embedding.models import ModelNotFound

    try:
        model_dir = resolve_model_dir(model)
    except ModelNotFound:
        raise RerankerUnavailable(
            f"reranker model {model!r} is not a local directory and not in the offline "
            "Hugging Face cache; set RAG_RERANKER_MODEL to a cross-encoder directory"
        ) from None
    architectures = _architectures(model_dir)
    if not any(a.endswith("ForSequenceClassification") for a in architectures):
        raise RerankerUnavailable(
            f"{model_dir} is not a cross-encoder (config.json architectures: "
            f"{', '.join(architectures) or 'none'}); RAG_RERANKER_MODEL needs a "
            "sequence-classification model such as cross-encoder/ms-marco-MiniLM-L6-v2"
        )
    if find_spec("sentence_transformers") is None:
        raise RerankerUnavailable(
            "RAG_RERANKER_MODEL is set but sentence-transformers is not installed "
            "(pip install 'rag-retrieve[torch]')"
        )
    from sentence_transformers import CrossEncoder

    encoder = CrossEncoder(str(model_dir), local_files_only=True)
    return CrossEncoderReranker(encoder, f"cross-encoder {model}")


def _architectures(model_dir: Path) -> list[str]:
    try:
        config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    found = config.get("architectures") if isinstance(config, dict) else None
    return [str(a) for a in found] if isinstance(found, list) else []


def mlx_available(system: str | None = None, machine: str | None = None) -> bool:
    system = platform.system() if system is None else system
    machine = platform.machine() if machine is None else machine
    return system == "Darwin" and machine == "arm64" and find_spec("mlx") is not None


# HTTP


@dataclass(frozen=True)
class RerankAPI:
    kind: str  # "tei" | "cohere"
    url: str


def rerank_apis(endpoint: str) -> list[RerankAPI]:
    """The APIs to try for an endpoint, in order (rules in the module docstring)."""
    base = endpoint.strip().rstrip("/")
    path = urlsplit(base).path
    if path.endswith(("/v1/rerank", "/v2/rerank")):
        return [RerankAPI("cohere", base)]
    if path.endswith("/rerank"):
        return [RerankAPI("tei", base)]
    if path.endswith("/v1"):
        return [RerankAPI("cohere", base + "/rerank")]
    return [RerankAPI("tei", base + "/rerank"), RerankAPI("cohere", base + "/v1/rerank")]


class HTTPReranker:
    """A reranking server (TEI or Cohere/Jina style). Each batch's request times out at the
    budget left; a batch that times out, and every batch after it, stays unscored."""

    def __init__(self, endpoint: str, model: str | None = None, batch_size: int = HTTP_BATCH):
        self.endpoint = endpoint
        self.model = model
        self.batch_size = batch_size
        self.apis = rerank_apis(endpoint)
        self.name = f"reranker at {self.apis[0].url}"
        self._client = JSONClient()

    def close(self) -> None:
        """Let go of the pooled connections to the server."""
        self._client.close()

    def score(self, query: str, passages: Sequence[str], *, budget_ms: int) -> list[float | None]:
        def run(batch: list[str], left: float) -> list[float | None]:
            return self._score_batch(query, batch, left)

        return score_in_batches(passages, budget_ms, self.batch_size, run)

    def _score_batch(self, query: str, batch: list[str], timeout_s: float) -> list[float | None]:
        last: RerankerUnavailable | None = None
        for position, api in enumerate(self.apis):
            try:
                reply = self._post(api, self._body(api, query, batch), timeout_s)
            except _RouteRejected as exc:
                last = RerankerUnavailable(str(exc))
                if position + 1 < len(self.apis):
                    continue
                raise last from None
            if len(self.apis) > 1:
                self.apis = [api]  # this one answered; no more guessing
                self.name = f"reranker at {api.url}"
            return parse_rerank_response(reply, api, len(batch))
        raise last or RerankerUnavailable(f"no rerank API at {self.endpoint}")

    def _body(self, api: RerankAPI, query: str, batch: list[str]) -> dict[str, Any]:
        if api.kind == "tei":
            # truncate: an over-long passage is cut to the model's window, not a 413.
            return {"query": query, "texts": batch, "truncate": True}
        body: dict[str, Any] = {"query": query, "documents": batch, "top_n": len(batch)}
        if self.model:
            body["model"] = self.model
        return body

    def _post(self, api: RerankAPI, body: dict[str, Any], timeout_s: float) -> Any:
        try:
            return self._client.post(api.url, body, timeout_s=timeout_s)
        except ServiceError as exc:
            if exc.kind == "timeout":
                raise _OutOfTime() from exc
            if exc.status in _FALLBACK_STATUSES and len(self.apis) > 1:
                raise _RouteRejected(str(exc)) from exc
            raise RerankerUnavailable(str(exc)) from exc


class _RouteRejected(Exception):
    """This API's route is missing or does not take this body: try the next API."""


def parse_rerank_response(body: Any, api: RerankAPI, n: int) -> list[float | None]:
    """Scores in passage order from a decoded TEI or Cohere/Jina reply; None for a passage
    the reply leaves out."""
    if api.kind == "tei":
        items, field = body, "score"
    else:
        items, field = (body.get("results") if isinstance(body, dict) else None), "relevance_score"
    if not isinstance(items, list):
        raise RerankerUnavailable(f"{api.url} returned no list of scores: {str(body)[:200]}")
    scores: list[float | None] = [None] * n
    for item in items:
        index = item.get("index") if isinstance(item, dict) else None
        value = item.get(field) if isinstance(item, dict) else None
        if (
            isinstance(index, bool)
            or not isinstance(index, int)
            or not 0 <= index < n
            or isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
        ):
            raise RerankerUnavailable(f"{api.url} returned a malformed result: {str(item)[:200]}")
        scores[index] = float(value)
    return scores


# Loading


def load_reranker(settings: Settings) -> tuple[Reranker | None, list[str]]:
    """The configured reranker (or None) and notes on what was chosen or why nothing was."""
    if settings.reranker_endpoint:
        http = HTTPReranker(settings.reranker_endpoint, settings.reranker_model)
        apis = " then ".join(f"{a.kind} {a.url}" for a in http.apis)
        return http, [f"reranking over HTTP: {apis}"]
    if not settings.reranker_model:
        return None, [NOT_CONFIGURED]
    notes = []
    if mlx_available():
        notes.append(
            "MLX is installed, but no MLX cross-encoder path is implemented; "
            "the reranker runs on torch"
        )
    try:
        reranker = load_cross_encoder(settings.reranker_model)
    except RerankerUnavailable as exc:
        return None, [*notes, f"reranker not loaded: {exc}; fused order kept"]
    except Exception as exc:  # a broken model directory degrades, never crashes a query
        reason = f"{type(exc).__name__}: {exc}"
        return None, [*notes, f"reranker {settings.reranker_model!r} failed to load ({reason})"]
    return reranker, [*notes, f"reranking with {reranker.name} on torch"]
