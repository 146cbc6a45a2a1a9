"""The backfill flow: a one-off ingest started by hand from the Prefect UI, with its
parameters as one typed model so the run form shows each field, its description and default."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime
from typing import Any

from prefect import flow
from pydantic import BaseModel, ConfigDict, Field

from chunkers.model import Domain
from chunkers.sources.discovery import SourceFile
from core.settings import Settings, VectorExecutor
from flows.corpora import IndexName
from flows.index_lock import index_slot
from flows.ingest_flow import run_ingest
from flows.run_report import RunReport, reported
from loaders.target import IngestTarget


class BackfillRequest(BaseModel):
    """What to ingest, into which index, and how."""

    model_config = ConfigDict(extra="forbid", title="Backfill request")

    paths: list[str] = Field(
        min_length=1,
        description=(
            "JSONL files, directories or globs to ingest. Relative paths are taken from the "
            "directory `python -m flows.serve` runs in."
        ),
        examples=[["data/sample/guides"]],
    )
    index: IndexName = Field("default", description="Index to load into; created on first use.")
    domain: Domain | None = Field(
        None, description="Domain of records that do not name their own; empty: inferred."
    )
    source: str | None = Field(
        None,
        description="Source of records that do not name their own; empty: per file type.",
    )
    since: date | None = Field(
        None,
        description=(
            "Only files modified on or after this date (UTC) are read; documents of older "
            "files are left untouched. Empty: every file."
        ),
    )
    force: bool = Field(
        False,
        description=(
            "Re-chunk and re-embed documents even when unchanged (the embedding cache still "
            "saves repeated vectors)."
        ),
    )
    vectors_later: bool = Field(
        False,
        description=(
            "Stop once the documents are keyword-searchable and leave their embedding to the "
            "embed-pending deployment (an overnight run, or another machine)."
        ),
    )
    embedding_model: str | None = Field(
        None,
        description=(
            "Embedding model name or local directory; empty: the configured model. An index "
            "keeps the model it was built with, so a different one needs a new index."
        ),
    )
    executor: VectorExecutor | None = Field(
        None,
        description=(
            "Where the vector phase embeds: `local` (the flow's process), `dask` (a Dask "
            "cluster; needs the `dask` extra) or `endpoints` (a pool of embedding servers); "
            "empty: the configured executor."
        ),
    )
    dask_address: str | None = Field(
        None,
        description=(
            "With `dask`: the scheduler of a running cluster (tcp://host:8786); empty: a "
            "temporary cluster of `dask_workers` processes on the flow's machine."
        ),
    )
    dask_workers: int | None = Field(
        None, gt=0, description="With `dask` and no address: the temporary cluster's workers."
    )
    endpoints: str | None = Field(
        None,
        description=(
            "With `endpoints`: the embedding servers, comma-separated URLs of OpenAI-compatible "
            "/v1/embeddings servers; empty: the configured pool."
        ),
    )

    def target(self) -> IngestTarget:
        """Where and how the paths are ingested."""
        return IngestTarget(
            self.index,
            domain=self.domain,
            source=self.source,
            force=self.force,
            defer_vectors=self.vectors_later,
        )


@flow(name="backfill", log_prints=True)
def backfill_flow(request: BackfillRequest) -> dict[str, Any]:
    """Ingest the given paths into an index once, incrementally unless forced.

    Args:
        request: What to ingest, into which index, and how.
    """
    settings = Settings.from_env(
        embedding_model=request.embedding_model,
        vector_executor=request.executor,
        dask_address=request.dask_address,
        dask_workers=request.dask_workers,
        embedding_endpoints=request.endpoints,
    )
    report = RunReport(f"Backfill into index `{request.index}`")
    report.notes.append(f"paths: {', '.join(request.paths)}")
    if request.since:
        report.notes.append(f"only files modified since {request.since.isoformat()} (UTC)")
    with reported(report, f"backfill-{request.index}", f"Backfill into {request.index}"):
        with index_slot(request.index) as slot:
            report.slot = slot
            summary = run_ingest(
                request.paths,
                settings,
                request.target(),
                select=modified_since(request.since) if request.since else None,
            )
        report.add_ingest(summary)
    return report.result()


def modified_since(day: date) -> Callable[[SourceFile], bool]:
    """A file filter: modified at or after the start of `day` (UTC)."""
    threshold = datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp()

    def keep(source: SourceFile) -> bool:
        try:
            return source.path.stat().st_mtime >= threshold
        except OSError:
            return True  # reading it reports the problem as a reject

    return keep
