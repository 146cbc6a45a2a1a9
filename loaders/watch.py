"""Live freshness: directories re-ingested within seconds of a change, by the one ingest.

`watch(paths, settings, target, ...)` ingests directories incrementally, then follows them with a
file watcher (watchfiles: inotify, FSEvents, ReadDirectoryChangesW). Changes to what the
directory ingest reads (`change_filter`: the same skip rules and .gitignore files) are
gathered until the trees have been quiet for `quiet_ms` (at most `max_batch_ms`), and each
burst becomes one more run of `loaders.ingest.ingest` over the same paths: the mtime fast
path and the content hashes leave unchanged files unread and unchanged chunks unembedded,
and files that are gone are pruned, as in any run. The model is loaded once for all runs.
Each run holds `lock()`; the flows pass the index's write slot, so that a watcher's runs
never interleave with another writer of the index.
"""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from watchfiles import Change
from watchfiles import watch as file_changes

from chunkers.sources.discovery import SourceError, source_kind, walked
from core.embedding.base import Embedder, EmbeddingError
from core.embedding.models import ModelNotFound
from core.embedding.runtimes import load_embedder
from core.settings import Settings
from core.store.location import StoreLocation
from loaders.ingest import ingest
from loaders.preflight import check_model
from loaders.summary import (
    SUMMARY_KEYS,
    IngestError,
    IngestSummary,
    IngestUsageError,
    runs_dir,
)
from loaders.target import IngestTarget

# Counts that add up over runs; documents seen or unchanged describe one run only.
# (and what the index holds at the end of one: its pending chunks and their share).
TOTAL_KEYS = tuple(
    k
    for k in SUMMARY_KEYS
    if k not in ("docs_seen", "docs_unchanged", "chunks_pending", "vector_coverage")
)
# How often the watcher wakes without events: the first wake starts the initial ingest
# (the watcher is live by then, so nothing changed during that ingest is missed).
_TICK_MS = 500


@dataclass
class WatchRun:
    """One ingest run of a watch; run 1 is the initial ingest of the whole trees."""

    number: int
    changed_paths: list[str]  # the events behind it, sorted; empty for run 1
    summary: IngestSummary | None = None  # None: the ingest itself failed
    error: str | None = None  # why the run failed; the watch goes on

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"run": self.number, "changed_paths": len(self.changed_paths)}
        if self.summary is not None:
            out.update(self.summary.counts())
        if self.error is not None:
            out["error"] = self.error
        return out


@dataclass
class WatchTotals:
    """What a watch did, over all its runs."""

    runs: int = 0
    failed: int = 0
    sums: dict[str, float] = field(default_factory=lambda: dict.fromkeys(TOTAL_KEYS, 0))
    last: WatchRun | None = None

    def add(self, run: WatchRun) -> None:
        self.last = run
        self.runs += 1
        if run.error is not None:
            self.failed += 1
        if run.summary is None:
            return
        counts = run.summary.counts()
        for key in TOTAL_KEYS:
            self.sums[key] += counts[key]

    def to_dict(self) -> dict[str, Any]:
        sums = {k: round(v, 3) if k == "seconds" else v for k, v in self.sums.items()}
        return {"runs": self.runs, "runs_failed": self.failed, **sums}


def watched_roots(paths: Iterable[str]) -> list[Path]:
    """The directories to follow, resolved; anything else is a usage error."""
    roots = []
    for raw in paths:
        path = Path(raw)
        if not path.is_dir():
            raise IngestUsageError(
                f"{raw}: --watch follows directories (a file or glob is ingested once "
                "without --watch)"
            )
        roots.append(path.resolve())
    return roots


def change_filter(
    roots: list[Path], own_output: Iterable[Path] = (), *, secrets: bool = False
) -> Callable[[Change, str], bool]:
    """Whether a file event can change what an ingest of `roots` reads: a file the directory
    walk reads, a .gitignore it honours, or a folder it enters (created or moved in with
    files in it). A deletion counts unless it is in a skipped or ignored folder: once gone,
    a folder cannot be told from a file. Events in `own_output` (the store, the embedding
    cache, staging, rejects) never count: each run writes there, and would start the next."""
    excluded = [path.resolve() for path in own_output]

    def relevant(change: Change, raw: str) -> bool:
        path = Path(raw)
        if any(path == out or out in path.parents for out in excluded):
            return False
        root = next((r for r in roots if path == r or r in path.parents), None)
        if root is None:
            return False
        if path.name == ".gitignore":
            return walked(root, path.parent, is_dir=True, secrets=secrets)
        if source_kind(path) is not None:
            return walked(root, path, secrets=secrets)
        if change == Change.deleted or path.is_dir():
            return walked(root, path, is_dir=True, secrets=secrets)
        return False

    return relevant


def own_output(settings: Settings, store: str | None) -> list[Path]:
    """Where ingest runs write beside their index: never a reason for another run."""
    places = [settings.index_dir, settings.staging_dir, runs_dir(settings, store)]
    directory = StoreLocation.parse(store).directory if store is not None else None
    if directory is not None:
        places.append(directory)
    return places


def watch(
    paths: list[str],
    settings: Settings,
    *,
    target: IngestTarget,
    stop: threading.Event,
    on_run: Callable[[WatchRun], None] | None = None,
    lock: Callable[[], AbstractContextManager[object]] = nullcontext,
    embedder: Embedder | None = None,
    quiet_ms: int = 600,
    max_batch_ms: int = 5000,
) -> WatchTotals:
    """Ingest the directories `paths` into `target`, then again after each burst of changes,
    until `stop` is set; `on_run` hears of each run as it ends. The initial run's errors
    are raised (nothing is being watched yet); a later run's are reported in its `WatchRun`
    and the watch goes on. The target's `force` applies to the initial run only."""
    roots = watched_roots(paths)
    if embedder is None:
        embedder = _load(settings)
    relevant = change_filter(
        roots, own_output(settings, target.store), secrets=settings.ingest_secrets
    )
    totals = WatchTotals()
    # The file watcher runs in a thread of its own and queues what it sees, so that a run's
    # vector phase can tell a newer change is waiting and pause for it (`interrupted`,
    # asked between model batches): an edit is keyword-searchable within a batch and a
    # quick load, however many vectors are still to come, and those follow in later runs.
    queued: queue.SimpleQueue[set[tuple[Change, str]] | None] = queue.SimpleQueue()
    waiting = threading.Event()  # a change is queued and no run has taken it yet

    def run(changed: list[str], *, initial: bool) -> None:
        outcome = WatchRun(totals.runs + 1, changed)
        try:
            with lock():
                outcome.summary = ingest(
                    paths,
                    settings,
                    target if initial else target.unforced(),
                    embedder=embedder,
                    interrupted=waiting.is_set,
                )
        except Exception as exc:
            # A terminal's Ctrl-C reaches the whole process group: the run's helpers (the
            # chunking workers, Prefect's temporary server holding the slot) may be gone
            # before it ends. The batches it committed stand; it is reported as failed.
            if stop.is_set():
                outcome.error = f"stopped during the run: {exc}"
            elif initial or not isinstance(exc, (IngestError, SourceError)):
                raise
            else:
                outcome.error = str(exc)
        totals.add(outcome)
        if on_run is not None:
            on_run(outcome)

    def follow() -> None:
        events = file_changes(
            *roots,
            watch_filter=relevant,
            step=quiet_ms,
            debounce=max_batch_ms,
            rust_timeout=_TICK_MS,
            yield_on_timeout=True,
            stop_event=stop,
        )
        try:
            with contextlib.closing(events):
                for changes in events:
                    if changes:
                        waiting.set()
                    queued.put(changes)
        finally:
            queued.put(None)  # the watcher has ended (stopped, or failed)

    follower = threading.Thread(target=follow, name="rag-watch-events", daemon=True)
    follower.start()
    first = True
    paused = False  # the last run's vector phase left chunks for later
    while True:
        item = queued.get()
        if item is None:
            break
        if first:  # the watcher is live: nothing changed during the initial run is missed
            first = False
            run([], initial=True)
        else:
            changes = set(item)
            while not queued.empty():  # every burst queued meanwhile, in one run
                more = queued.get()
                if more is None:
                    queued.put(None)
                    break
                changes |= more
            waiting.clear()
            if changes and not stop.is_set():
                run(sorted({path for _, path in changes}), initial=False)
            elif paused and not stop.is_set():
                run([], initial=False)  # quiet again: the vectors the last run paused
        last = totals.last
        paused = bool(last and last.summary and last.summary.vectors_paused)
    follower.join(timeout=5)
    return totals


def _load(settings: Settings) -> Embedder:
    """The settings' model, loaded once for every run of the watch."""
    check_model(settings)
    try:
        return load_embedder(settings)
    except (EmbeddingError, ModelNotFound) as exc:
        raise IngestError(str(exc)) from exc
