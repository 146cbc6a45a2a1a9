"""How questions are answered: fusion and its calibration, expansion, rerank, CoRAG and the
link places, and the warm worker and local servers that answer them."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings

from core.settings.common import ANY_FILE, USER_FILE


class QuerySettings(BaseSettings):
    """The query side's fields of `Settings` (core/settings/model.py)."""

    rrf_k: int = Field(
        60,
        gt=0,
        validation_alias="RAG_RRF_K",
        json_schema_extra=ANY_FILE,
        description="reciprocal rank fusion constant (`--fusion rrf`)",
    )
    # After an ingest that made an index new or changed it by a quarter, choose its fusion
    # rule from its own chunks (query/calibration; a minute on a few thousand chunks).
    fusion_calibration: bool = Field(
        True,
        validation_alias="RAG_FUSION_CALIBRATION",
        json_schema_extra=ANY_FILE,
        description="calibrate an index's fusion rule after an ingest that changed it materially",
    )
    # Weighted fusion: the vector leg's weight; the keyword leg gets the rest.
    fusion_vector_weight: float = Field(
        0.6,
        ge=0.0,
        le=1.0,
        validation_alias="RAG_FUSION_VECTOR_WEIGHT",
        json_schema_extra=ANY_FILE,
        description="the vector leg's weight in fusion; the keyword leg gets the rest",
    )
    # The query expansions' lists together weigh this much against the original query's
    # (None: each expansion counts like the original) ...
    fusion_expansion_share: float | None = Field(
        0.25,
        ge=0.0,
        validation_alias="RAG_FUSION_EXPANSION_SHARE",
        json_schema_extra=ANY_FILE,
        description="what the query expansions weigh together against the original query",
    )
    # ... and search these signals: "both", or "bm25" (keyword variants to the keyword leg).
    expansion_route: Literal["both", "bm25"] = Field(
        "bm25",
        validation_alias="RAG_EXPANSION_ROUTE",
        json_schema_extra=ANY_FILE,
        description="`bm25`: expansions search the keyword leg only; `both`",
    )
    # Without an LLM: add keyword, identifier and feedback variants (off: measured to cost
    # code search more than they give elsewhere; docs/evaluation.md).
    deterministic_expansion: bool = Field(
        False,
        validation_alias="RAG_DETERMINISTIC_EXPANSION",
        json_schema_extra=ANY_FILE,
        description=(
            "without an LLM, add identifier, framework-vocabulary, feedback and keyword variants"
        ),
    )
    candidates_per_signal: int = Field(
        50,
        gt=0,
        validation_alias="RAG_CANDIDATES_PER_SIGNAL",
        json_schema_extra=ANY_FILE,
        description="vector and BM25 candidates per query variant",
    )
    rerank_candidates: int = Field(
        40,
        gt=0,
        validation_alias="RAG_RERANK_CANDIDATES",
        json_schema_extra=ANY_FILE,
        description="fused candidates sent to the reranker",
    )
    rerank_budget_ms: int = Field(
        1500,
        ge=0,
        validation_alias="RAG_RERANK_BUDGET_MS",
        json_schema_extra=ANY_FILE,
        description="time budget of one rerank, milliseconds",
    )
    reranker_endpoint: str | None = Field(
        None,
        validation_alias="RERANKER_ENDPOINT",
        json_schema_extra=USER_FILE,
        description="TEI `/rerank` or Cohere/Jina `/v1/rerank` server",
    )
    reranker_model: str | None = Field(
        None,
        validation_alias="RAG_RERANKER_MODEL",
        json_schema_extra=USER_FILE,
        description=(
            "local cross-encoder directory (or cached hub id); model name for "
            "Cohere-style endpoints"
        ),
    )
    llm_endpoint: str | None = Field(
        None,
        validation_alias="OPENCLAW_LLM_ENDPOINT",
        json_schema_extra=USER_FILE,
        description="OpenAI-compatible chat server for expansion and CoRAG",
    )
    llm_model: str = Field(
        "gemma-4",
        validation_alias="OPENCLAW_LLM_MODEL",
        json_schema_extra=USER_FILE,
        description="chat model name",
    )
    llm_timeout_s: float = Field(
        8.0,
        gt=0,
        validation_alias="RAG_LLM_TIMEOUT_S",
        json_schema_extra=ANY_FILE,
        description="hard deadline per LLM call, seconds",
    )
    link_callers: Literal["off", "asked", "always"] = Field(
        "asked",
        validation_alias="RAG_LINK_CALLERS",
        json_schema_extra=ANY_FILE,
        description="link places also follow a top result's declaration to its callers in "
        "other files: never, when the question asks what calls or uses something, or always",
    )
    corag_max_hops: int = Field(
        3,
        ge=0,
        validation_alias="RAG_CORAG_MAX_HOPS",
        json_schema_extra=ANY_FILE,
        description="follow-up retrievals at most",
    )
    query_worker_url: str | None = Field(
        None,
        validation_alias="RAG_QUERY_WORKER_URL",
        json_schema_extra=USER_FILE,
        description="`python -m query` asks this worker instead of loading models",
    )
    # The warm worker (python -m query serve): retrievals at once (the engine serialises
    # model inference), running + queued requests (beyond it 503 with Retry-After), body size
    # and body read time.
    worker_threads: int = Field(
        4,
        gt=0,
        validation_alias="RAG_WORKER_THREADS",
        json_schema_extra=USER_FILE,
        description="retrievals the worker runs at once",
    )
    worker_max_pending: int = Field(
        128,
        gt=0,
        validation_alias="RAG_WORKER_MAX_PENDING",
        json_schema_extra=USER_FILE,
        description="requests running or queued; beyond, 503 with `Retry-After`",
    )
    worker_max_body_bytes: int = Field(
        1 << 20,
        gt=0,
        validation_alias="RAG_WORKER_MAX_BODY_BYTES",
        json_schema_extra=USER_FILE,
        description="larger request bodies get 413",
    )
    worker_read_timeout_s: float = Field(
        10.0,
        gt=0,
        validation_alias="RAG_WORKER_READ_TIMEOUT_S",
        json_schema_extra=USER_FILE,
        description="a body that does not arrive in time gets 408, seconds",
    )
    # The MCP ingest tool's next child waits, imports done (query/mcp/prestarted.py): a call
    # on a few files takes 2-3 s instead of 5, for one idle process (~155 MB RSS) kept.
    mcp_prestart: bool = Field(
        True,
        validation_alias="RAG_MCP_PRESTART",
        json_schema_extra=USER_FILE,
        description=(
            "the MCP server with an ingest tool keeps its next ingest child started, "
            "Prefect imported, so a call does not wait for that (one idle process)"
        ),
    )
    # Who may talk to the local servers (serve, mcp --http; query/serve/guard.py): a bearer
    # token every route but the liveness probe then requires, the Host names accepted
    # besides loopback's (comma-separated; "*" for any, with a token only), and the browser
    # origins accepted (comma-separated; none by default).
    auth_token: SecretStr | None = Field(
        None,
        validation_alias="RAG_AUTH_TOKEN",
        json_schema_extra=USER_FILE,
        description=(
            "the bearer token `serve` and `mcp --http` require on every route but "
            "`/live`, and `python -m query` sends (docs/security.md)"
        ),
    )
    allowed_hosts: str = Field(
        "",
        validation_alias="RAG_ALLOWED_HOSTS",
        json_schema_extra=USER_FILE,
        description=(
            "`Host` names the servers answer besides loopback's and the bound "
            "address (comma-separated; `*`: any, which needs a token: without one the "
            "servers refuse to start)"
        ),
    )
    allowed_origins: str = Field(
        "",
        validation_alias="RAG_ALLOWED_ORIGINS",
        json_schema_extra=USER_FILE,
        description="browser origins the servers answer (comma-separated; none by default)",
    )

    @property
    def bearer_token(self) -> str | None:
        """The token the local servers require and their clients send (RAG_AUTH_TOKEN)."""
        return self.auth_token.get_secret_value() or None if self.auth_token else None
