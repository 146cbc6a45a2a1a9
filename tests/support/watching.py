"""The watcher (loaders.watch.watch) in a thread of the test, with a fake model: each run
arrives on a queue as it ends."""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from core.settings import Settings
from loaders.target import IngestTarget
from loaders.watch import WatchRun, WatchTotals, watch
from tests.support.fake_runtime import FakeEmbedder


def settings_for(tmp_path: Path) -> Settings:
    return Settings(
        data_dir=tmp_path / "data",
        index_dir=tmp_path / "indexes",
        staging_dir=tmp_path / "staging",
    )


class Watcher:
    """`watch` in a thread with a fake model; runs arrive on a queue as they end."""

    def __init__(self, root: Path, settings: Settings, store: Path, **options: Any) -> None:
        self.embedder = options.pop("embedder", None) or FakeEmbedder()
        self.runs: queue.Queue[WatchRun] = queue.Queue()
        self.stop = threading.Event()
        self.totals: WatchTotals | None = None
        self.failure: BaseException | None = None
        self._args = ([str(root)], settings)
        self._options = {"target": IngestTarget("app", str(store)), **options}
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        try:
            self.totals = watch(
                *self._args,
                stop=self.stop,
                on_run=self.runs.put,
                embedder=self.embedder,
                **self._options,
            )
        except BaseException as exc:  # handed to the test thread by next_run
            self.failure = exc

    def next_run(self, timeout: float = 120) -> WatchRun:
        try:
            return self.runs.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no run within {timeout:.0f}s ({self.failure!r})") from None

    def embedded_since(self, before: int) -> list[str]:
        return self.embedder.embedded_texts[before:]

    def close(self) -> WatchTotals:
        self.stop.set()
        self._thread.join(timeout=60)
        assert not self._thread.is_alive(), "the watch did not stop"
        assert self.totals is not None, self.failure
        return self.totals


@contextmanager
def watching(root: Path, tmp_path: Path, **options: Any) -> Iterator[Watcher]:
    store = options.pop("store", tmp_path / "store")
    watcher = Watcher(root, settings_for(tmp_path), store, **options)
    try:
        yield watcher
    finally:
        watcher.stop.set()
