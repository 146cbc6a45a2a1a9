"""The embed-pending flow: an index's vector phase alone (`loaders.ingest.embed`), each stage a
Prefect task, then the index's fusion calibration once its vectors are complete.
`python -m flows.embed` (flows/embed.py) and the `embed-pending` deployment run it."""

from __future__ import annotations

import contextlib
from functools import partial
from typing import Any

from prefect import flow

from core.settings import Settings, VectorExecutor
from flows.corpora import IndexName
from flows.index_lock import index_slot
from flows.ingest_flow import calibrate_stage, prefect_stage, run_result
from loaders.ingest import embed
from loaders.target import IngestTarget

# `loaders.ingest.embed` with Prefect tasks for its stages; same arguments (see there).
run_embed = partial(embed, run_stage=prefect_stage)


@flow(name="embed-pending", log_prints=True)
def embed_pending_flow(
    index: IndexName = "default",
    store: str | None = None,
    embedding_model: str | None = None,
    library_logs: bool | None = None,
    lock: bool = False,
    executor: VectorExecutor | None = None,
    dask_address: str | None = None,
    dask_workers: int | None = None,
    endpoints: str | None = None,
) -> dict[str, Any]:
    """Embed every chunk of an index that has no vector yet (`ingest --vectors later`, or a
    run stopped during its vector phase). Resumes wherever the last run stopped; with nothing
    pending it does nothing.

    Args:
        index: The index whose pending chunks to embed.
        store: Its store, a directory or a tidb:// URL; empty: the configured store.
        embedding_model: The index's model name or local directory; empty: the configured one.
        library_logs: Let the model libraries' own progress and logs through.
        lock: Hold the index's write slot (index-write:NAME) while writing.
        executor: Where to embed: `local` (this process), `dask` (a Dask cluster; needs
            the `dask` extra where the flow runs) or `endpoints` (a pool of embedding
            servers); empty: the configured executor.
        dask_address: With `dask`, the scheduler of a running cluster (tcp://host:8786);
            empty: a temporary cluster on the flow's machine.
        dask_workers: With `dask` and no address, the temporary cluster's worker processes.
        endpoints: With `endpoints`, the embedding servers, comma-separated URLs; empty:
            the configured pool (RAG_EMBEDDING_ENDPOINTS).
    """
    target = IngestTarget(index, store)
    settings = Settings.from_env(
        embedding_model=embedding_model,
        library_logs=library_logs,
        vector_executor=executor,
        dask_address=dask_address,
        dask_workers=dask_workers,
        embedding_endpoints=endpoints,
    )
    with index_slot(target.index) if lock else contextlib.nullcontext():
        summary = run_embed(settings, target)
        calibration = prefect_stage("calibrate", calibrate_stage, settings, target)
    return run_result(summary, calibration, "embed", "Embed-pending summary")
