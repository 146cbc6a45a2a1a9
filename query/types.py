"""The shapes the query side passes around: a request, a scored result, a response."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, Literal, get_args

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field

from chunkers.model import Domain
from core.versions import VersionError, normalize_version

if TYPE_CHECKING:  # the worker's client imports this module, and must stay light
    from core.store.contract import Hit

Mode = Literal["hybrid", "vector", "bm25"]
Fusion = Literal["auto", "adaptive", "weighted", "rrf"]
# Chosen on the dev sets (docs/evaluation.md): the default on every kind of question.
DEFAULT_FUSION: Fusion = "auto"
MAX_QUERY_CHARS = 4000


def _query(value: Any) -> Any:
    if value is None:
        raise ValueError("missing query")
    if not isinstance(value, str):
        raise ValueError(f"query must be a string, got {type(value).__name__}")
    text = value.strip()
    if not text:
        raise ValueError("empty query")
    if len(text) > MAX_QUERY_CHARS:
        raise ValueError(f"query of {len(text)} characters exceeds the limit of {MAX_QUERY_CHARS}")
    return text


def _version(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise ValueError(f"ios_version must be a version such as 17.0, got {value!r}")
    try:
        return normalize_version(str(value))
    except VersionError as exc:
        raise ValueError(f"malformed ios_version: {exc}") from None


def _names(value: Any) -> Any:
    """A list of names, or one string of comma-separated names, trimmed and deduplicated."""
    if value is None:
        return value
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)) or not all(isinstance(i, str) for i in items):
        return value  # pydantic's own type error names the field
    return tuple(dict.fromkeys(i.strip() for i in items if i.strip()))


def _some_index(value: Any) -> Any:
    if value == ():
        raise ValueError("indexes names no index")
    return value


def _text(value: Any) -> Any:
    return value.strip() if isinstance(value, str) and value.strip() else value


class QueryRequest(BaseModel):
    """One retrieval request, from CLI flags, a worker's JSON body or an agent's tool call.
    Its JSON schema is the contract those callers see; field descriptions are written for a
    model choosing arguments."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    query: Annotated[str, BeforeValidator(_query)] = Field(
        description="The question or the code to find, in natural language or as identifiers."
    )
    domain: Domain | None = Field(
        None,
        description="Only chunks of this domain, of 'general' and of the user's codebase.",
    )
    ios_version: Annotated[str | None, BeforeValidator(_version)] = Field(
        None,
        description="The iOS deployment target (e.g. 17.0). Pass it for any Apple-platform "
        "question in a project with a known target: APIs introduced after it or deprecated by "
        "it are dropped. Leave it out for other questions.",
    )
    frameworks: Annotated[tuple[str, ...], BeforeValidator(_names)] = Field(
        (), description="Prefer chunks tagged with these Apple frameworks (e.g. SwiftData)."
    )
    top_k: int = Field(10, ge=1, description="At most this many chunks, best first.")
    corag: bool = Field(
        False,
        description="Multi-hop retrieval: follow up on what the first results name (a type, "
        "a document) and search again. For questions whose answer spans several documents; "
        "slower, and more so with an LLM configured.",
    )
    links: bool = Field(
        True,
        description="Place the documents the top results name, and the declarations of the "
        "code names they use, right below the first five results.",
    )
    user_codebase: bool = Field(True, description="Include the user's own indexed codebase.")
    # None = every index in the store
    indexes: Annotated[
        tuple[str, ...] | None, BeforeValidator(_names), AfterValidator(_some_index)
    ] = Field(None, description="Search only these named indexes (default: all).")
    store: Annotated[str | None, BeforeValidator(_text)] = Field(
        None, min_length=1, description="The store this request is meant for."
    )
    mode: Mode = Field("hybrid", description="Signals to search.")
    fusion: Fusion = Field(
        DEFAULT_FUSION,
        description="How the signals' lists are fused: auto takes the rule each index's "
        "calibration chose (adaptive where it has none, or where the searched indexes chose "
        "differently).",
    )
    max_tokens: int | None = Field(
        None,
        ge=1,
        description="Token budget of the returned chunks: lower-ranked chunks are dropped "
        "until the rest fit (the order is never changed).",
    )
    fresh_within_days: int | None = Field(
        None, ge=0, description="Only chunks verified within this many days."
    )
    include_deprecated: bool = Field(False, description="Keep APIs deprecated by ios_version.")
    strict: bool = Field(False, description="Fail instead of answering with a degraded pipeline.")
    rerank: bool = Field(True, description="Rerank when a reranker is available.")
    expand: bool = Field(True, description="Expand the query into variants.")


@dataclass(frozen=True)
class RankedList:
    """The hits of one signal for one query variant, best first, each with its index."""

    signal: str  # "vector" | "bm25"
    variant: int  # position of the query variant (0 = the original query)
    hits: Sequence[tuple[str, Hit]]  # (index name, hit)

    @classmethod
    def of_index(cls, signal: str, index: str, variant: int, hits: Sequence[Hit]) -> RankedList:
        return cls(signal, variant, [(index, hit) for hit in hits])


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
    # What each signal added to the fused score (query.retrieval.fusion); later boosts scale the total.
    contributions: dict[str, float] = field(default_factory=dict)
    # For a chunk placed by a link: the name that linked it and the chunk that mentioned it.
    linked_from: dict[str, str] | None = None
    # The fingerprint of its normalised content (core/store/text_key.py), from its hits or
    # its stored row; fusion deduplicates by it. None: not known yet.
    text_key: int | None = None

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


MODES: tuple[str, ...] = get_args(Mode)
FUSIONS: tuple[str, ...] = get_args(Fusion)
