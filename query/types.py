"""The shapes the query side passes around: a request, a scored result, a response."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

MODES = ("hybrid", "vector", "bm25")
FUSIONS = ("adaptive", "weighted", "rrf")
# Chosen on the dev sets (README, *Evaluation*): the default on every kind of question.
DEFAULT_FUSION = "adaptive"
MAX_QUERY_CHARS = 4000


@dataclass(frozen=True)
class QueryRequest:
    query: str
    domain: str | None = None
    ios_version: str | None = None
    frameworks: tuple[str, ...] = ()
    top_k: int = 10
    corag: bool = False
    user_codebase: bool = True
    indexes: tuple[str, ...] | None = None  # None = every index in the store
    store: str | None = None
    mode: str = "hybrid"
    fusion: str = DEFAULT_FUSION
    max_tokens: int | None = None
    fresh_within_days: int | None = None
    include_deprecated: bool = False
    strict: bool = False
    rerank: bool = True
    expand: bool = True


@dataclass
class Candidate:
    """One chunk on its way through retrieval, with its rank in every signal."""

    chunk_id: str
    index: str
    row: dict[str, Any] = field(default_factory=dict)  # the stored chunk (fetch)
    score: float = 0.0
    ranks: dict[str, int | None] = field(
        default_factory=lambda: {"vector": None, "bm25": None, "rerank": None}
    )
    signal_scores: dict[str, float] = field(default_factory=dict)

    @property
    def key(self) -> tuple[str, str]:
        return (self.index, self.chunk_id)


@dataclass
class QueryResponse:
    chunks: list[dict[str, Any]]
    total_tokens: int
    query_expansions: list[str]
    corag_trace: list[dict[str, Any]] | None
    timings_ms: dict[str, float]
    notes: list[str]
    # How the first retrieval's lists were fused: method, signal weights, keyword confidence
    # (adaptive), the expansions' share and route. None when nothing was fused.
    fusion: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
