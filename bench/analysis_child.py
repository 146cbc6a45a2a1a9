"""Load throughput with the analysis child (core/store/sqlite/analysis_process.py) against the
same split done by `concurrent.futures.ProcessPoolExecutor` on the spawn context.

    .venv/bin/python bench/analysis_child.py [--chunks 20000 100000] [--rounds 2]

Both analyse the child's share of each batch in a second process while the writer inserts
the rows, and move the share the same way after every batch; only the plumbing differs
(our child: `python -m`, pickles over pipes; the pool: multiprocessing's spawn, which
imports this script's `__main__` in the worker). Each round loads every size once with ours
(A) and once with the pool (B), A B A B ..., into a fresh index; chunks/s is chunks over the
seconds in `apply`, so the worker's start-up counts, as it would in a real load. On a busy
box the wall clock mostly measures the other jobs, so the CPU seconds of both processes
(this one and its analysis child, which has exited when the index closes) are shown too.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import resource
import statistics
import sys
import tempfile
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import sqlite_store as store_bench  # noqa: E402

from core.store.sqlite.analysis_process import (  # noqa: E402
    _SHARE_STEP,
    MIN_OFFLOAD_CHARS,
    Texts,
    analyse_all,
)
from core.store.sqlite.store import SQLiteStore  # noqa: E402


class PoolAnalysis:
    """AnalysisProcess's interface and split, on a one-worker spawn ProcessPoolExecutor."""

    def __init__(self) -> None:
        self._pool: ProcessPoolExecutor | None = None
        self.share = 0.7

    def submit(self, contexts: Texts, contents: Texts) -> Callable[[], list[str]]:
        if sum(len(t or "") for t in contents) < MIN_OFFLOAD_CHARS:
            return lambda: analyse_all(contexts, contents)
        if self._pool is None:
            self._pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
        split = round(len(contents) * self.share)
        future: Future[list[str]] = self._pool.submit(
            analyse_all, list(contexts[:split]), list(contents[:split])
        )

        def result() -> list[str]:
            rest = analyse_all(contexts[split:], contents[split:])
            child_first = future.done()
            bodies = future.result()
            step = _SHARE_STEP if child_first else -_SHARE_STEP
            self.share = min(1.0, max(0.0, self.share + step))
            return bodies + rest

        return result

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None


def cpu_seconds() -> float:
    """CPU seconds of this process and of its children that have exited."""
    mine = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return sum(u.ru_utime + u.ru_stime for u in (mine, children))


def load_rate(chunks: list, vectors, pool: bool) -> tuple[float, float]:
    """(chunks/s over the seconds in apply, CPU ms per 1,000 chunks of both processes)."""
    cpu = cpu_seconds()
    with tempfile.TemporaryDirectory() as tmp:
        index = SQLiteStore(tmp).open_index("load", create=True)
        index.bind_model("bench", store_bench.DIM)
        if pool:
            index._analysis.close()
            index._analysis = PoolAnalysis()  # type: ignore[assignment]
        _, apply = store_bench.load(index, chunks, vectors)
        index.close()
    return len(chunks) / apply, (cpu_seconds() - cpu) / len(chunks) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, nargs="+", default=[20_000, 100_000])
    parser.add_argument("--words", type=int, default=230)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    data = {
        n: (store_bench.synthetic_chunks(n, args.words, seed=1), store_bench.unit_vectors(n, 2))
        for n in args.chunks
    }
    rates: dict[tuple[int, str], list[float]] = {}
    cpus: dict[tuple[int, str], list[float]] = {}
    for round_ in range(args.rounds):
        for n, (chunks, vectors) in data.items():
            for label in ("ours", "pool"):
                load1 = os.getloadavg()[0]
                rate, cpu = load_rate(chunks, vectors, pool=label == "pool")
                rates.setdefault((n, label), []).append(rate)
                cpus.setdefault((n, label), []).append(cpu)
                print(
                    f"round {round_ + 1} {n} chunks {label}: {rate:,.0f} chunks/s, "
                    f"{cpu:.0f} CPU ms per 1k chunks (load average {load1:.1f})",
                    flush=True,
                )
    for n in args.chunks:
        ours, pool = rates[(n, "ours")], rates[(n, "pool")]
        print(
            f"{n} chunks: ours {' / '.join(f'{r:,.0f}' for r in ours)}, "
            f"pool {' / '.join(f'{r:,.0f}' for r in pool)} chunks/s; "
            f"pool/ours median {statistics.median(pool) / statistics.median(ours):.3f}, "
            f"per round {' / '.join(f'{p / o:.3f}' for o, p in zip(ours, pool, strict=True))}"
        )
        ours_cpu, pool_cpu = cpus[(n, "ours")], cpus[(n, "pool")]
        print(
            f"{n} chunks CPU ms per 1k chunks: ours {' / '.join(f'{c:.0f}' for c in ours_cpu)}, "
            f"pool {' / '.join(f'{c:.0f}' for c in pool_cpu)}; pool/ours median "
            f"{statistics.median(pool_cpu) / statistics.median(ours_cpu):.3f}"
        )


if __name__ == "__main__":
    main()
