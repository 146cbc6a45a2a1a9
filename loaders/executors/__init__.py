"""Where a vector phase spread over workers runs its shards (loaders/shards.py).

An executor takes the shard tasks and yields each one's final outcome as it completes, in
any order: a success (the vectors, or what the worker wrote itself), or a failure after
`vector_shard_attempts` runs. What a task does on a worker is loaders/executors/worker.py's,
the same for every executor; writing and recording the outcomes is loaders/sharded.py's.
One small module per executor: dask.py (a Dask cluster through Prefect's task runner) and
endpoints.py (a pool of embedding servers).

`--executor local` is not one of them: it is the vector phase of one process
(loaders/vectors.py), which needs no shards.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable, Iterator
from typing import Protocol

from core.embedding.base import Embedder
from core.settings import Settings
from loaders.executors.worker import ShardOutcome, ShardTask
from loaders.summary import IngestUsageError

EXECUTORS = ("local", "dask", "endpoints")
# The optional install each executor needs, and the modules that prove it is there.
_EXTRAS = {"dask": ("dask", ("distributed", "prefect_dask"))}


class ShardExecutor(Protocol):
    name: str

    def run(self, tasks: Iterable[ShardTask], reference: Embedder) -> Iterator[ShardOutcome]:
        """Each task's final outcome as it completes. `reference` is the index's embedder in
        this process: what a worker that cannot show its model files must match."""
        ...


def check_executor(settings: Settings) -> None:
    """IngestUsageError (exit 2) naming the extra to install when the settings' executor
    needs one that is missing, or the servers `endpoints` needs when none are set."""
    name = settings.vector_executor
    if name == "endpoints" and not settings.endpoint_pool:
        raise IngestUsageError(
            "--executor endpoints needs its embedding servers: --endpoints URL[,URL...] "
            "(or RAG_EMBEDDING_ENDPOINTS)"
        )
    if name not in _EXTRAS:
        return
    extra, modules = _EXTRAS[name]
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        raise IngestUsageError(
            f"--executor {name} needs the {extra!r} extra ({', '.join(missing)} not installed): "
            f"pip install 'rag-retrieve[{extra}]'"
        )


def executor_for(settings: Settings) -> ShardExecutor | None:
    """The settings' executor; None for `local` (the one-process vector phase)."""
    check_executor(settings)
    if settings.vector_executor == "endpoints":
        from loaders.executors.endpoints import EndpointsExecutor

        return EndpointsExecutor(
            settings.endpoint_pool,
            settings,
            concurrency=settings.endpoint_concurrency,
            attempts=settings.vector_shard_attempts,
        )
    if settings.vector_executor == "dask":
        from loaders.executors.dask import DaskExecutor

        return DaskExecutor(
            settings.dask_address,
            workers=settings.dask_workers,
            attempts=settings.vector_shard_attempts,
        )
    return None
