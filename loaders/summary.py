"""What an ingest run reports: its counts, stage timings, rejects and notes."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from chunkers.model import Reject
from core.ingest_lines import BREAKDOWN_KEYS
from core.settings import Settings
from core.store.location import StoreLocation

SUMMARY_KEYS = (
    "docs_seen",
    "docs_new",
    "docs_changed",
    "docs_unchanged",
    "docs_deleted",
    "docs_rejected",
    "chunks_written",
    "chunks_deleted",
    "chunks_embedded",
    "embedding_cache_hits",
    "chunks_pending",
    "vector_coverage",
    "seconds",
)
# Breakdowns by name, printed after the counts (core/ingest_lines.py's BREAKDOWN_KEYS): chunks
# written per language, and the files a directory holds that were not read, per type
# ("skipped by type: 37 .pbxproj, ...").


class IngestError(RuntimeError):
    """A run that cannot start or finish; the message names the path or setting at fault."""


class IngestUsageError(IngestError):
    """A bad argument (domain, index name, a store path that is a file): exit 2."""


@dataclass
class IngestSummary:
    docs_seen: int = 0
    docs_new: int = 0
    docs_changed: int = 0
    docs_unchanged: int = 0
    docs_deleted: int = 0
    docs_rejected: int = 0
    chunks_written: int = 0
    chunks_deleted: int = 0
    chunks_embedded: int = 0
    embedding_cache_hits: int = 0
    # Chunks of the index without a vector when the run ended (`--vectors later`, or ones
    # the model gives no usable vector), and the share that has one.
    chunks_pending: int = 0
    vector_coverage: float = 1.0
    seconds: float = 0.0
    vectors_paused: bool = False  # the vector phase stopped early for newer work (a watch)
    files_read: int = 0  # files opened this run; the others matched their recorded mtime
    index: str = ""
    store: str = ""
    rejects_file: str | None = None
    rejects: list[dict[str, Any]] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    chunks_by_language: dict[str, int] = field(default_factory=dict)
    skipped_by_type: dict[str, int] = field(default_factory=dict)
    # A vector phase spread over workers (loaders/sharded.py): its executor, shard counts,
    # resubmissions and each shard's report (worker, attempts, seconds, error); empty when
    # the phase ran in this process.
    vector_shards: dict[str, Any] = field(default_factory=dict)

    def counts(self) -> dict[str, Any]:
        return {key: getattr(self, key) for key in SUMMARY_KEYS}

    def breakdowns(self) -> dict[str, dict[str, int]]:
        return {key: dict(getattr(self, key)) for key in BREAKDOWN_KEYS}


def followed_by(lexical: IngestSummary, vectors: IngestSummary) -> IngestSummary:
    """One run's summary from its lexical phase and the vector phase run after it
    (`ingest(vector_phase=False)`, then `embed`)."""
    return replace(
        lexical,
        docs_rejected=lexical.docs_rejected + vectors.docs_rejected,
        chunks_embedded=vectors.chunks_embedded,
        embedding_cache_hits=vectors.embedding_cache_hits,
        chunks_pending=vectors.chunks_pending,
        vector_coverage=vectors.vector_coverage,
        vectors_paused=vectors.vectors_paused,
        seconds=round(lexical.seconds + vectors.seconds, 3),
        rejects_file=vectors.rejects_file or lexical.rejects_file,
        rejects=[*lexical.rejects, *vectors.rejects],
        timings={**lexical.timings, **vectors.timings},
        notes=[*lexical.notes, *vectors.notes],
        vector_shards=vectors.vector_shards,
    )


def by_count(counts: dict[str, int]) -> dict[str, int]:
    """Most first, then by name: the order a breakdown is shown in."""
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))


@dataclass
class Stage:
    """Timing of one stage, for the summary's table."""

    summary: IngestSummary
    name: str
    started: float = 0.0

    def __enter__(self) -> Stage:
        self.started = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.summary.timings[self.name] = round(time.perf_counter() - self.started, 3)


def runs_dir(settings: Settings, store: str | None) -> Path:
    """Where a run's outputs go: beside an index directory named with --store (a `runs/`
    folder, never listed as an index), else the data directory's `runs/`."""
    directory = StoreLocation.parse(store).directory if store is not None else None
    if directory is not None:
        return directory / "runs"
    return settings.data_dir / "runs"


def write_rejects(runs: Path, index: str, rejects: list[Reject]) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    path = runs / f"ingest-{index}-{stamp}" / "rejects.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for reject in rejects:
            handle.write(json.dumps(reject.to_dict(), ensure_ascii=False) + "\n")
    return path
