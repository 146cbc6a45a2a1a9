"""The `dask` executor: shards run as Prefect task runs on a Dask cluster, through
prefect-dask's `DaskTaskRunner` (the optional `dask` extra).

With an address the runner connects to a running cluster (`dask scheduler` and `dask worker
tcp://…` started on other machines); without one it starts a temporary LocalCluster of
`workers` single-threaded processes here, each given its share of the cores.

What its documented traps ask of us:
- a task's argument is a `ShardTask` naming the shard's files, not its texts (large
  arguments serialise slowly);
- a shard is a task run, so an ingest makes hundreds of them at most, and no more are in
  flight than the cluster has threads (a dying worker takes every task it holds with it);
- a worker that dies fails its task with `KilledWorker` (the temporary cluster is told not to
  rerun it behind our back): the shard is submitted again, as a new task run, up to
  `attempts` times, then reported failed; no exception of one shard reaches the flow;
- each future is released once its outcome is taken, so a later worker death cannot make
  the cluster recompute a shard already loaded;
- worker logs never reach Prefect's UI: each outcome carries its worker, timing and error.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator
from typing import Any
from urllib.parse import urlparse

from core.embedding.base import Embedder
from loaders.executors.worker import ShardOutcome, ShardTask, embed_shard, share_of_cores


class DaskExecutor:
    name = "dask"

    def __init__(self, address: str | None, *, workers: int, attempts: int) -> None:
        self.address = address
        self.workers = workers
        self.attempts = attempts

    def _runner(self) -> Any:
        from prefect_dask import DaskTaskRunner

        if self.address:
            return DaskTaskRunner(address=self.address)
        # The workers report their task runs to this process's Prefect API: without its
        # address each would start a temporary API server of its own.
        url = _api_url()
        return DaskTaskRunner(
            cluster_kwargs={
                "n_workers": self.workers,
                "threads_per_worker": 1,
                "processes": True,
                "dashboard_address": None,
                **({"env": {"PREFECT_API_URL": url}} if url else {}),
            }
        )

    def run(self, tasks: Iterable[ShardTask], reference: Embedder) -> Iterator[ShardOutcome]:
        # Each worker loads the model itself and shows its identity (worker.py): `reference`
        # is not needed.
        import dask
        from distributed import as_completed
        from prefect import task
        from prefect.cache_policies import NO_CACHE

        shard_task = task(
            name="embed shard", cache_policy=NO_CACHE, task_run_name="shard {shard}", retries=0
        )(_on_worker)
        runner = self._runner()
        # A worker's death fails its task at once (KilledWorker) rather than after Dask's
        # own silent reruns: the shard's attempts are ours to count and report.
        with dask.config.set({"distributed.scheduler.allowed-failures": 0}), runner:
            client = runner.client
            per_host = workers_per_host(client.scheduler_info(n_workers=-1))
            running: dict[str, tuple[ShardTask, int, Any]] = {}
            # (task, attempt) not yet submitted: no more in flight than the cluster has
            # threads, since every task a worker holds dies with it (queued ones too).
            waiting = deque((shard, 1) for shard in tasks)

            def submit_more(completed: Any) -> None:
                room = max(1, _threads(client)) - len(running)
                for _ in range(min(room, len(waiting))):
                    shard, attempt = waiting.popleft()
                    future = runner.submit(
                        shard_task,
                        parameters={
                            "task": shard,
                            "attempt": attempt,
                            "per_host": per_host,
                            "shard": shard.shard.shard_id[:12],
                        },
                    )
                    running[future.wrapped_future.key] = (shard, attempt, future)
                    completed.add(future.wrapped_future)

            completed = as_completed(loop=client.loop)
            submit_more(completed)
            for done in completed:
                shard, attempt, future = running.pop(done.key)
                outcome, error = _settle(done)
                done.release()
                del future
                if outcome is not None:
                    outcome.attempts = attempt
                    yield outcome
                elif attempt < self.attempts:
                    waiting.appendleft((shard, attempt + 1))
                else:
                    yield ShardOutcome(shard.shard, False, error=error, attempts=attempt)
                submit_more(completed)


def _threads(client: Any) -> int:
    """Worker threads in the cluster now (workers may join or leave during a run)."""
    workers = client.scheduler_info(n_workers=-1).get("workers", {})
    return sum(int(w.get("nthreads", 1)) for w in workers.values())


def _on_worker(task: ShardTask, attempt: int, per_host: dict[str, int], shard: str) -> ShardOutcome:
    """The task run on a Dask worker (`shard` names the task run)."""
    from distributed import get_worker

    host = urlparse(get_worker().address).hostname or ""
    return embed_shard(task, threads=share_of_cores(per_host.get(host, 1)), attempt=attempt)


def _api_url() -> str | None:
    """The Prefect API this process talks to: the configured one, or the temporary server it
    runs (flows/prefect_api/server.py)."""
    from prefect.server.api.server import SubprocessASGIServer
    from prefect.settings import PREFECT_API_URL

    configured: str | None = PREFECT_API_URL.value()
    if configured:
        return configured
    server = SubprocessASGIServer()
    return server.api_url if server.running else None


def workers_per_host(info: dict[str, Any]) -> dict[str, int]:
    """Worker processes per host, from the scheduler's info."""
    counts: dict[str, int] = {}
    for worker in info.get("workers", {}).values():
        host = str(worker.get("host", ""))
        counts[host] = counts.get(host, 0) + 1
    return counts


def _settle(done: Any) -> tuple[ShardOutcome | None, str]:
    """(the outcome, "") of a task run that completed; (None, the error) otherwise: its worker
    died (KilledWorker), or the task raised (the Prefect state is failed)."""
    from prefect.states import State

    try:
        state = done.result()
    except Exception as exc:  # noqa: BLE001 - KilledWorker, lost connections: all retried
        return None, f"{type(exc).__name__}: {exc}"
    if not isinstance(state, State):
        return state, ""
    if state.is_completed():
        return state.result(), ""
    failure = state.result(raise_on_failure=False)
    return None, f"{state.name}: {type(failure).__name__}: {failure}"
