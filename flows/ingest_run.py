"""How one ingest command runs its flow (`flows.ingest.run`): when Prefect's temporary
server is starting, the lexical phase first, beside that start, so that the index answers
keyword questions before the API does; then the flow, with `Phases` saying where the
command's seconds went."""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from core.settings import Settings
from flows.ingest import preparation
from loaders.summary import IngestSummary
from loaders.target import IngestTarget

if TYPE_CHECKING:
    from flows.prefect_api.server import ApiStart

# The lexical phase's reject list as a flow parameter: the artifact shows as many, and the
# command keeps every one (Prefect stores a flow run's parameters in its database).
PARAMETER_REJECTS = 200
# When the command began, if not when its process did: a process started ahead of its command
# (flows/prestarted.py) counts from the moment it was handed one, not from its idle wait.
_command_started: float | None = None


def command_started_now() -> None:
    """This process's command begins now (flows/prestarted.py)."""
    global _command_started
    _command_started = time.time()


def run_flow(
    args: argparse.Namespace, settings: Settings, target: IngestTarget, start: ApiStart | None
) -> dict[str, Any]:
    """The ingest flow's result. When Prefect's temporary server is starting (`start`), the
    lexical phase runs first, beside its start, and the index answers keyword questions
    seconds before the API does; the flow then runs the vector phase and calibration.
    A run under the index's write slot (`--lock`) needs the API first, for the slot, and
    runs the whole flow as a configured API always does."""
    from flows.prefect_api.server import prepare_beside, using_api
    from loaders.ingest import ingest

    phases = Phases()
    lexical = None
    if start is not None and not args.lock:
        with console_progress(), phases.timed("lexical"):
            lexical = ingest(args.paths, settings, target, vector_phase=False)
        phases.searchable()
        # The index answers now; the rest waits for Prefect's server, which may take a while.
        print(
            f"keyword search ready in index {target.index}: {lexical.chunks_written} chunks "
            f"written after {phases.searchable_s:.1f}s; Prefect's temporary API server is "
            "starting for the flow's record"
            + ("" if target.defer_vectors else " and the vector phase"),
            file=sys.stderr,
            flush=True,
        )
    with phases.timed("prepare"):
        prepare_beside(preparation(settings, "flows.ingest_flow", model=not target.defer_vectors))
    with phases.timed("api_wait"):
        url = start.wait() if start is not None else None
    with using_api(url) if url else contextlib.nullcontext(), phases.timed("flow"):
        from flows.ingest_flow import ingest_flow

        result: dict[str, Any] = ingest_flow(
            paths=args.paths,
            target=target,
            library_logs=settings.library_logs,
            lock=args.lock,
            executor=settings.vector_executor,
            dask_address=settings.dask_address,
            dask_workers=settings.dask_workers,
            endpoints=settings.embedding_endpoints,
            lexical=lexical and capped(lexical),
        )
    if lexical is not None:
        # The flow's parameter carried a capped list; the command reports every reject.
        carried = len(capped(lexical).rejects)
        result["rejects"] = [*lexical.rejects, *result["rejects"][carried:]]
    result["phases"] = phases.report(start)
    return result


def process_started() -> float:
    """When this process started, as a `time.time()` value. On Linux from the kernel's own
    clocks: psutil's create_time adds the boot time /proc/stat gives in whole seconds, which
    put up to a second into every `startup` phase (0.7 s on the machine that found it)."""
    if sys.platform == "linux":
        with open("/proc/self/stat", encoding="ascii") as stat:
            # Fields after the command's name, which may hold spaces: starttime is the 22nd
            # field, in clock ticks since boot.
            after_name = stat.read().rsplit(")", 1)[1].split()
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - int(after_name[19]) / os.sysconf(
            "SC_CLK_TCK"
        )
        return time.time() - age
    import psutil

    return float(psutil.Process().create_time())


class Phases:
    """Where a command's time went, from its start (its process's, or `command_started_now`):
    the seconds of each phase, and when the index first answered keyword questions
    (`searchable_s`), when the command saw it (the lexical phase ran before the flow)."""

    def __init__(self) -> None:
        self.process_started = _command_started or process_started()
        self.seconds: dict[str, float] = {"startup": self.since_start()}
        self.searchable_s: float | None = None

    def since_start(self) -> float:
        return round(time.time() - self.process_started, 3)

    @contextlib.contextmanager
    def timed(self, name: str) -> Iterator[None]:
        began = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] = round(time.perf_counter() - began, 3)

    def searchable(self) -> None:
        self.searchable_s = self.since_start()

    def report(self, start: ApiStart | None) -> dict[str, float | None]:
        return {
            **self.seconds,
            "total": self.since_start(),
            "searchable": self.searchable_s,
            # Prefect's temporary server: seconds from its launch to its first answer.
            "api_start": start.ready_s if start is not None else None,
        }


def capped(summary: IngestSummary) -> IngestSummary:
    return replace(summary, rejects=summary.rejects[:PARAMETER_REJECTS])


@contextlib.contextmanager
def console_progress() -> Iterator[None]:
    """The `rag` loggers' progress lines on stderr while Prefect's logging is not set up
    yet (the lexical phase runs before Prefect is imported), in Prefect's console format."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        logging.Formatter(
            "%(asctime)s.%(msecs)03d | %(levelname)-7s | %(name)s - %(message)s", "%H:%M:%S"
        )
    )
    logger = logging.getLogger("rag")
    logger.addHandler(handler)
    try:
        yield
    finally:
        logger.removeHandler(handler)
