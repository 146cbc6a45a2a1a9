"""Where data lives, how documents are chunked and loaded, and where the vector phase runs:
the settings of ingestion (sources → chunkers → loaders)."""

from __future__ import annotations

from pathlib import Path
from typing import Self

from pydantic import Field, model_validator
from pydantic_settings import BaseSettings

from core.settings.common import ANY_FILE, NO_FILE, USER_FILE, VectorExecutor, data_dir_default


class IngestSettings(BaseSettings):
    """Ingestion's fields of `Settings` (core/settings/model.py)."""

    # data/ in a clone of this project, else the user data folder (core/config_files.py).
    data_dir: Path = Field(
        default_factory=data_dir_default,
        validation_alias="RAG_DATA_DIR",
        json_schema_extra=USER_FILE,
        description="where runs (rejects) are written",
    )
    index_dir: Path = Field(
        default_factory=lambda: data_dir_default() / "indexes",
        validation_alias="RAG_INDEX_DIR",
        json_schema_extra=USER_FILE,
        description="the embedded store: one SQLite file per index, plus the embedding cache",
    )
    staging_dir: Path = Field(
        default_factory=lambda: data_dir_default() / "staging",
        validation_alias="RAG_STAGING_DIR",
        json_schema_extra=USER_FILE,
        description="stage outputs of unfinished ingest runs (Parquet, .npy)",
    )
    # Corpora maintained by the Prefect deployments (flows.serve).
    corpora_file: Path = Field(
        default_factory=lambda: data_dir_default() / "corpora.toml",
        validation_alias="RAG_CORPORA_FILE",
        json_schema_extra=USER_FILE,
        description="the corpora the deployments maintain (flows.serve)",
    )

    # Chunking
    chunk_target_tokens: int = Field(
        400,
        gt=0,
        validation_alias="RAG_CHUNK_TARGET_TOKENS",
        json_schema_extra=ANY_FILE,
        description="chunk size the chunkers aim for (embedding-model tokens)",
    )
    chunk_max_tokens: int = Field(
        512,
        ge=16,
        validation_alias="RAG_CHUNK_MAX_TOKENS",
        json_schema_extra=ANY_FILE,
        description="hard limit per chunk",
    )
    chunk_overlap_tokens: int = Field(
        40,
        ge=0,
        validation_alias="RAG_CHUNK_OVERLAP_TOKENS",
        json_schema_extra=ANY_FILE,
        description="overlap when prose is split at sentence boundaries",
    )
    chat_window_messages: int = Field(
        5,
        gt=0,
        validation_alias="RAG_CHAT_WINDOW_MESSAGES",
        json_schema_extra=ANY_FILE,
        description="messages per chat chunk",
    )
    max_document_bytes: int = Field(
        5_000_000,
        gt=0,
        validation_alias="RAG_MAX_DOCUMENT_BYTES",
        json_schema_extra=ANY_FILE,
        description="larger documents are rejected",
    )
    sources_dir: Path = Field(
        default_factory=lambda: data_dir_default() / "sources",
        validation_alias="RAG_SOURCES_DIR",
        json_schema_extra=USER_FILE,
        description=(
            "pages fetched from the web (`rag-retrieve fetch`): <host>/<path>.json, and their "
            "fetch records under .fetch/"
        ),
    )
    fetch_contact: str | None = Field(
        None,
        validation_alias="RAG_FETCH_CONTACT",
        json_schema_extra=USER_FILE,
        description=(
            "a URL or e-mail address put in the fetcher's User-Agent so that a site's "
            "operators can reach you; unset, the package's project URL if it has one"
        ),
    )
    docc_base_url: str | None = Field(
        None,
        validation_alias="RAG_DOCC_BASE_URL",
        json_schema_extra=USER_FILE,
        description=(
            "where a package's DocC archive is served (https://example.org/mypackage): its "
            "pages' URLs; unset, a page's URL is its archive-relative path. Apple's pages "
            "always open on developer.apple.com"
        ),
    )
    # A 5 MB document of prose at the default target makes ~3,000 chunks; far more means a
    # generated dump or a pathological page (flows reject it, named, instead of embedding it).
    max_chunks_per_document: int = Field(
        5000,
        gt=0,
        validation_alias="RAG_MAX_CHUNKS_PER_DOCUMENT",
        json_schema_extra=ANY_FILE,
        description="a document that yields more chunks is rejected, named",
    )
    # Whole documents per load transaction: what a crash can cost is at most one batch.
    load_batch_docs: int = Field(
        256,
        gt=0,
        validation_alias="RAG_LOAD_BATCH_DOCS",
        json_schema_extra=ANY_FILE,
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
        json_schema_extra=ANY_FILE,
        description="chunks embedded per vector-phase commit",
    )
    # Where the vector phase runs (loaders/executors/): this process, or a Dask cluster through
    # Prefect's task runner (the `dask` extra). The user's choice, like the store: a project's
    # file must not send its chunks to another machine.
    vector_executor: VectorExecutor = Field(
        "local",
        validation_alias="RAG_VECTOR_EXECUTOR",
        json_schema_extra=USER_FILE,
        description=(
            "where the vector phase embeds: `local` (this process), `dask` (a Dask cluster "
            "through Prefect's task runner; `pip install 'rag-retrieve[dask]'`) or `endpoints` "
            "(the servers of `RAG_EMBEDDING_ENDPOINTS`); [Scaling out](scaling.md)"
        ),
    )
    dask_address: str | None = Field(
        None,
        validation_alias="RAG_DASK_ADDRESS",
        json_schema_extra=USER_FILE,
        description=(
            "the Dask scheduler of the `dask` executor (`tcp://host:8786`); unset: a temporary "
            "cluster of `RAG_DASK_WORKERS` processes on this machine"
        ),
    )
    dask_workers: int = Field(
        2,
        gt=0,
        validation_alias="RAG_DASK_WORKERS",
        json_schema_extra=USER_FILE,
        description="single-threaded worker processes of the temporary Dask cluster",
    )
    # The `endpoints` executor's pool: the user's, like the one endpoint (a project's file must
    # not send its chunks to another machine).
    embedding_endpoints: str | None = Field(
        None,
        validation_alias="RAG_EMBEDDING_ENDPOINTS",
        json_schema_extra=USER_FILE,
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
        json_schema_extra=USER_FILE,
        description="shards in flight per server of the `endpoints` executor",
    )
    # About a minute of a worker's CPU per shard: hundreds of task runs per ingest at most
    # (thousands stall Prefect's API), and a lost worker costs one shard.
    vector_shard_tokens: int = Field(
        200_000,
        ge=100,
        validation_alias="RAG_VECTOR_SHARD_TOKENS",
        json_schema_extra=ANY_FILE,
        description="tokens per shard of a vector phase spread over workers",
    )
    vector_shard_attempts: int = Field(
        3,
        gt=0,
        validation_alias="RAG_VECTOR_SHARD_ATTEMPTS",
        json_schema_extra=ANY_FILE,
        description=(
            "runs of a shard whose worker died or failed before it is recorded failed (its "
            "chunks stay pending for the next run)"
        ),
    )
    # Shard files (Parquet) the workers read: on a mount every worker reaches when the
    # cluster spans machines.
    vector_spool_dir: Path = Field(
        default_factory=lambda: data_dir_default() / "staging" / "shards",
        validation_alias="RAG_VECTOR_SPOOL_DIR",
        json_schema_extra=USER_FILE,
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
        json_schema_extra=USER_FILE,
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
        json_schema_extra=NO_FILE,
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
        json_schema_extra=NO_FILE,
        description=(
            "test hook: a marker file; the first worker of a sharded vector phase to embed "
            "creates it and dies mid-shard (the resubmission tests use it)"
        ),
    )

    @model_validator(mode="after")
    def _consistent(self) -> Self:
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
