"""The ingest flow: `loaders.ingest` with each stage run as a Prefect task, and the run's
summary left as a flow-run artifact. `python -m flows.ingest` (flows/ingest.py) runs it."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from dataclasses import asdict
from functools import partial
from typing import Any, TypeVar

from prefect import flow, task
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NO_CACHE

from core.settings import Settings, VectorExecutor
from flows.index_lock import index_slot
from loaders.ingest import embed, ingest
from loaders.summary import IngestSummary, followed_by
from loaders.target import IngestTarget
from query.calibration.after_ingest import calibrate_if_changed

T = TypeVar("T")
_LOG = logging.getLogger("rag.ingest")


def prefect_stage(name: str, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """Run one stage of `loaders.ingest` as a Prefect task. Its progress reaches the run's
    log through the stage's module logger (flows/__init__.py names our loggers to Prefect).

    Resumability comes from our own Parquet staging; Prefect's result caching would try (and
    fail, noisily) to hash the stores and caches passed as stage inputs, so it is off."""
    stage_task: Any = task(name=name, cache_policy=NO_CACHE)(fn)
    result: T = stage_task(*args, **kwargs)
    return result


# `loaders.ingest.ingest` with Prefect tasks for its stages; same arguments (see there).
run_ingest = partial(ingest, run_stage=prefect_stage)


@flow(name="ingest", log_prints=True)
def ingest_flow(
    paths: list[str],
    target: IngestTarget,
    embedding_model: str | None = None,
    library_logs: bool | None = None,
    lock: bool = False,
    executor: VectorExecutor | None = None,
    dask_address: str | None = None,
    dask_workers: int | None = None,
    endpoints: str | None = None,
    lexical: IngestSummary | None = None,
) -> dict[str, Any]:
    """Ingest corpora into one index, incrementally: only new and changed documents are
    chunked and embedded, vanished ones are pruned, unchanged ones cost a stat or a hash.
    With `lock`, under the index's write slot, as the deployments' runs. `executor`,
    `dask_address`, `dask_workers` and `endpoints` (comma-separated URLs): where the vector
    phase runs (docs/scaling.md); empty: the configured executor. `lexical`: the summary of
    the lexical phase the command ran already, while Prefect's temporary server started
    (flows/ingest.py): the flow runs the vector phase and calibration after it."""
    settings = Settings.from_env(
        embedding_model=embedding_model,
        library_logs=library_logs,
        vector_executor=executor,
        dask_address=dask_address,
        dask_workers=dask_workers,
        embedding_endpoints=endpoints,
    )
    with index_slot(target.index) if lock else contextlib.nullcontext():
        if lexical is None:
            summary = run_ingest(paths, settings, target)
        elif target.defer_vectors:
            summary = lexical
        else:
            summary = followed_by(lexical, embed(settings, target, run_stage=prefect_stage))
        calibration = prefect_stage("calibrate", calibrate_stage, settings, target)
    return run_result(summary, calibration, "ingest", "Ingest summary")


def run_result(
    summary: IngestSummary, calibration: dict[str, Any] | None, kind: str, title: str
) -> dict[str, Any]:
    """A flow's result: the summary (with the calibration, when one ran), also left as the
    run's `<kind>-<index>` artifact."""
    create_markdown_artifact(
        key=f"{kind}-{artifact_key(summary.index)}",
        markdown=summary_markdown(summary),
        description=f"{title} for index {summary.index}",
    )
    result = asdict(summary)
    if calibration is not None:
        result["calibration"] = calibration
    return result


def calibrate_stage(settings: Settings, target: IngestTarget) -> dict[str, Any] | None:
    """Choose the index's fusion rule when the ingest made it new or changed it materially
    (query/calibration). A failure here leaves the index on its previous rule and does not
    fail the ingest, whose chunks are committed already."""
    try:
        return calibrate_if_changed(settings, target.store, target.index, log=_LOG.info)
    except Exception as exc:  # noqa: BLE001 - reported, and the ingest stands
        _LOG.warning("fusion calibration of %s skipped: %s", target.index, exc)
        return {"error": str(exc)}


def summary_markdown(summary: IngestSummary) -> str:
    rows = "\n".join(f"| {key} | {value} |" for key, value in summary.counts().items())
    timings = "\n".join(f"| {k} | {v:.3f} |" for k, v in summary.timings.items())
    text = (
        f"# Ingest into `{summary.index}` ({summary.store})\n\n"
        f"| count | value |\n|---|---|\n{rows}\n\n"
        f"| stage | seconds |\n|---|---|\n{timings}\n"
    )
    for title, counts in (
        ("Chunks by language", summary.chunks_by_language),
        ("Skipped by type", summary.skipped_by_type),
    ):
        if counts:
            rows = "\n".join(f"| {name} | {n} |" for name, n in counts.items())
            text += f"\n## {title}\n\n| | count |\n|---|---|\n{rows}\n"
    if summary.rejects:
        listed = "\n".join(
            f"| {r['file']} | {r['line'] or ''} | {r.get('field') or ''} | {r['reason']} |"
            for r in summary.rejects[:200]
        )
        text += f"\n## Rejects\n\n| file | line | field | reason |\n|---|---|---|---|\n{listed}\n"
    if shards := summary.vector_shards:
        # Worker logs never reach Prefect's UI: each shard's worker, time and error do here.
        listed = "\n".join(
            f"| {r['shard']} | {r['chunks']} | {r['tokens']} | {'done' if r['ok'] else 'failed'} "
            f"| {r['attempts']} | {r['worker']} | {r['seconds']} | {r.get('error', '')} |"
            for r in shards["reports"]
        )
        text += (
            f"\n## Shards ({shards['executor']}): {shards['shards']} run, {shards['failed']} "
            f"failed, {shards['resubmitted']} resubmitted\n\n"
            "| shard | chunks | tokens | state | attempts | worker | seconds | error |\n"
            f"|---|---|---|---|---|---|---|---|\n{listed}\n"
        )
    if summary.notes:
        text += "\n## Notes\n\n" + "\n".join(f"- {n}" for n in summary.notes) + "\n"
    return text


def artifact_key(index: str) -> str:
    # Artifact keys allow lowercase letters, digits and dashes only.
    return "".join(ch if ch.isalnum() else "-" for ch in index.lower()).strip("-") or "index"
