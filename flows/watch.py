"""`python -m flows.ingest DIR... --watch`: the index follows the code as it is edited.

`watch_index` is `loaders.watch.watch` with each run holding the index's write slot
(`flows.index_lock`), the one the deployments' refresh, backfill and reverify runs take: a
watcher's runs never interleave with theirs, nor with another watcher's, on the same index.
The runs themselves call the ingest directly, without a Prefect flow or tasks: a change
costs its own work and a slot round trip, not a flow run's bookkeeping.

`watch_cli` is the command line around it: Prefect's temporary API server for the slot
(unless one is configured), one line per run on stderr (and with --json its reject lines and
one `"run"` line per run on stdout, core/ingest_lines.py's schema), and a clean stop with a
summary on Ctrl-C or SIGTERM (`"totals"` with --json).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from core.embedding.runtimes import kept_embedders
from core.ingest_lines import RUN, TOTALS, encode, error_line, reject_line, where
from core.settings import Settings
from flows.index_lock import index_slot
from flows.prefect_api.server import temporary_api_server
from loaders.preflight import prepare_model
from loaders.target import IngestTarget
from loaders.watch import WatchRun, WatchTotals, watch

# A second Ctrl-C does not wait for the current run: the conventional 128 + SIGINT.
EXIT_INTERRUPTED = 130
# A slot round trip takes well under a second; longer means another run holds the slot.
SLOT_NOTICE_S = 1.0


def watch_index(
    paths: list[str],
    settings: Settings,
    *,
    target: IngestTarget,
    stop: threading.Event,
    on_run: Callable[[WatchRun], None] | None = None,
    on_wait: Callable[[], None] | None = None,
    **options: Any,
) -> WatchTotals:
    """Follow the directories `paths` into `target` until `stop` is set, each run under the
    index's write slot (options as for `loaders.watch.watch`); `on_wait()` is called when
    a run has waited SLOT_NOTICE_S for the slot. Needs a Prefect API: a configured one, or
    call inside `temporary_api_server(settings)`."""
    return watch(
        paths,
        settings,
        target=target,
        stop=stop,
        on_run=on_run,
        lock=lambda: noticed_slot(target.index, on_wait),
        **options,
    )


@contextmanager
def noticed_slot(index: str, on_wait: Callable[[], None] | None) -> Iterator[None]:
    """The index's write slot. A watcher says nothing until its run ends, so a wait for a
    slot another run holds (a refresh can take minutes) would look like a missed change."""
    timer = threading.Timer(SLOT_NOTICE_S, on_wait) if on_wait is not None else None
    if timer is not None:
        timer.daemon = True
        timer.start()
    try:
        with index_slot(index):
            if timer is not None:
                timer.cancel()
            yield
    finally:
        if timer is not None:
            timer.cancel()


def watch_cli(args: argparse.Namespace, target: IngestTarget, settings: Settings) -> int:
    """Run `watch_index` for the ingest CLI's arguments (checked by its preflight); errors
    before the first run is done are raised for the CLI to report as for any ingest."""
    stop = threading.Event()
    with stop_on_signals(stop):
        try:
            with (
                kept_embedders(),
                temporary_api_server(settings, lambda: prepare_model(settings)),
            ):
                totals = watch_index(
                    args.paths,
                    settings,
                    target=target,
                    stop=stop,
                    on_run=lambda run: report_run(run, as_json=args.json),
                    on_wait=lambda: say(
                        f"waiting for the write slot of index {args.index}: another run "
                        "is writing it"
                    ),
                )
        except KeyboardInterrupt:
            message = "interrupted; the index holds every batch committed so far"
            print(message, file=sys.stderr)
            if args.json:
                print(error_line(message, EXIT_INTERRUPTED), flush=True)
            return EXIT_INTERRUPTED
    if args.json:
        print(encode(TOTALS, totals.to_dict()), flush=True)
    else:
        print(totals_line(totals, args.index), flush=True)
    return 0


@contextmanager
def stop_on_signals(stop: threading.Event) -> Iterator[None]:
    """SIGINT and SIGTERM set `stop`: the run under way finishes and the watch ends. A second
    signal interrupts at once (KeyboardInterrupt)."""

    def handler(signum: int, frame: object) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()
        # os.write: a print here could re-enter a print the main thread is in the middle of.
        notice = f"{signal.Signals(signum).name}: stopping after the current run\n"
        os.write(sys.stderr.fileno(), notice.encode())

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def report_run(run: WatchRun, *, as_json: bool) -> None:
    rejects = run.summary.rejects if run.summary is not None else []
    for reject in rejects:
        print(f"rejected: {where(reject)}: {reject['reason']}", file=sys.stderr)
        if as_json:
            print(reject_line(reject, run=run.number))
    print(run_line(run), file=sys.stderr, flush=True)
    if as_json:
        print(encode(RUN, run.to_dict()), flush=True)


def run_line(run: WatchRun) -> str:
    count = len(run.changed_paths)
    trigger = (
        "initial"
        if run.number == 1
        else f"{count} changed path{'s' * (count != 1)}"
        if count
        else "vectors a change paused"
    )
    head = f"run {run.number} ({trigger})"
    summary = run.summary
    if summary is None:
        return f"{head} failed: {run.error}"
    line = (
        f"{head}: {summary.docs_new} new, {summary.docs_changed} changed, "
        f"{summary.docs_deleted} deleted, {summary.docs_rejected} rejected documents; "
        f"chunks {summary.chunks_written} written, {summary.chunks_deleted} deleted, "
        f"{summary.chunks_embedded} embedded, {summary.embedding_cache_hits} from cache; "
        f"{summary.seconds:.2f}s"
    )
    return line if run.error is None else f"{line}; then failed: {run.error}"


def totals_line(totals: WatchTotals, index: str) -> str:
    sums = totals.sums
    return (
        f"watch of index {index} ended after {totals.runs} run{'s' * (totals.runs != 1)} "
        f"({totals.failed} failed): "
        f"{sums['docs_new']:.0f} new, {sums['docs_changed']:.0f} changed, "
        f"{sums['docs_deleted']:.0f} deleted documents; chunks {sums['chunks_written']:.0f} "
        f"written, {sums['chunks_embedded']:.0f} embedded"
    )
