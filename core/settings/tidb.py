"""The TiDB store: where it is, how to reach it securely, and how it loads and searches."""

from __future__ import annotations

from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings

from core.settings.common import ANY_FILE, USER_FILE


class TidbSettings(BaseSettings):
    """The TiDB store's fields of `Settings` (core/settings/model.py)."""

    tidb_host: str | None = Field(
        None,
        validation_alias="TIDB_HOST",
        json_schema_extra=USER_FILE,
        description="TiDB host; set = TiDB is the default store",
    )
    tidb_port: int = Field(
        4000,
        gt=0,
        lt=65536,
        validation_alias="TIDB_PORT",
        json_schema_extra=USER_FILE,
        description="TiDB port",
    )
    tidb_user: str = Field(
        "root", validation_alias="TIDB_USER", json_schema_extra=USER_FILE, description="TiDB user"
    )
    tidb_password: str = Field(
        "",
        validation_alias="TIDB_PASSWORD",
        json_schema_extra=USER_FILE,
        description="TiDB password (prefer it to a password in a `--store` URL)",
    )
    tidb_database: str = Field(
        "rag",
        validation_alias="TIDB_DATABASE",
        json_schema_extra=USER_FILE,
        description="TiDB database holding the indexes' tables",
    )
    tidb_ssl_ca: str | None = Field(
        None,
        validation_alias="TIDB_SSL_CA",
        json_schema_extra=USER_FILE,
        description="CA file; turns TLS on",
    )
    tidb_ssl_verify: bool = Field(
        True,
        validation_alias="TIDB_SSL_VERIFY",
        json_schema_extra=USER_FILE,
        description="verify certificate and host name",
    )
    # TLS with the system CAs (TiDB Cloud); implied by tidb_ssl_ca.
    tidb_ssl: bool = Field(
        False,
        validation_alias="TIDB_SSL",
        json_schema_extra=USER_FILE,
        description="TLS with the system CA store",
    )
    # LOAD DATA LOCAL INFILE measured 1.3x faster than multi-row INSERT (bench/tidb_load.py,
    # 100k chunks, MariaDB 10.11); INSERT is the automatic fallback.
    tidb_load_method: Literal["load_data", "insert"] = Field(
        "load_data",
        validation_alias="RAG_TIDB_LOAD_METHOD",
        json_schema_extra=USER_FILE,
        description="`load_data` (LOAD DATA LOCAL INFILE) or `insert`",
    )
    # A connection idle this long is replaced before its next use: TiDB Cloud Starter's AWS
    # endpoint drops connections idle for 340 s, and a dropped one costs a failed round trip.
    tidb_max_idle_s: float = Field(
        300.0,
        gt=0,
        validation_alias="RAG_TIDB_MAX_IDLE_S",
        json_schema_extra=ANY_FILE,
        description="seconds after which an idle TiDB connection is replaced before its next use",
    )
    # Chunks written (by one index handle) after which the TiFlash replica is compacted, so
    # that they reach the HNSW index (its delta layer is not indexed until then).
    tidb_compact_after_rows: int = Field(
        50_000,
        gt=0,
        validation_alias="RAG_TIDB_COMPACT_AFTER_ROWS",
        json_schema_extra=ANY_FILE,
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
        json_schema_extra=ANY_FILE,
        description="postings the TiDB keyword search reads per query term, highest BM25 "
        "impact first (a term in more chunks is scored only in these)",
    )
