"""The watcher in-process (no Prefect): a burst of changes is one incremental run that
embeds only new text and prunes deleted files; what the directory ingest skips or ignores,
and what the runs write themselves, start no run; a failed run does not end the watch."""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from watchfiles import Change

from core.store.filters import SearchFilter
from core.store.sqlite.store import SQLiteStore
from loaders.summary import IngestError, IngestUsageError
from loaders.target import IngestTarget
from loaders.watch import change_filter, watch
from tests.support.fake_runtime import FakeEmbedder
from tests.support.paths import FIXTURES
from tests.support.watching import settings_for, watching

NEW_FUNCTION = """
/// Archives finished trips into one file the user can share.
func archiveFinishedTrips(_ trips: [Trip]) -> URL {
    URL(fileURLWithPath: "trips.zip")
}
"""
NEW_FILE = """import Foundation

/// What to pack for a trip, checked off as it goes into the bag.
struct PackingList {
    var items: [String]
}
"""


@pytest.fixture
def code(tmp_path: Path) -> Path:
    root = tmp_path / "code"
    shutil.copytree(FIXTURES / "query" / "app", root)
    (root / ".gitignore").write_text("Generated/\n*.generated.swift\n")
    return root


def test_a_burst_of_changes_is_one_run_that_embeds_only_new_text(code: Path, tmp_path: Path):
    entered: list[str] = []

    @contextmanager
    def lock() -> Iterator[None]:
        entered.append("lock")
        yield

    with watching(code, tmp_path, lock=lock) as watcher:
        first = watcher.next_run()
        assert first.summary is not None and first.summary.docs_new == 2
        before = len(watcher.embedder.embedded_texts)

        with (code / "TripStore.swift").open("a") as handle:
            handle.write(NEW_FUNCTION)
        (code / "PackingList.swift").write_text(NEW_FILE)
        (code / "Trip+Duration.swift").unlink()
        burst = watcher.next_run()
        totals = watcher.close()

    assert burst.number == 2 and burst.error is None
    assert [Path(p).name for p in burst.changed_paths] == [
        "PackingList.swift",
        "Trip+Duration.swift",
        "TripStore.swift",
    ]
    summary = burst.summary
    assert summary is not None
    assert (summary.docs_new, summary.docs_changed, summary.docs_deleted) == (1, 1, 1)
    embedded = watcher.embedded_since(before)
    # Code is embedded with its identifiers as words (loaders.stages.embedding_text).
    assert embedded and all("archive Finished Trips" in t or "Packing List" in t for t in embedded)
    assert summary.chunks_embedded == len(embedded)
    assert entered == ["lock", "lock"]
    assert (totals.runs, totals.failed, totals.sums["docs_new"]) == (2, 0, 3)


def test_skipped_ignored_and_own_files_start_no_run(code: Path, tmp_path: Path):
    # The store inside the watched tree: the runs' own writes must not start runs.
    with watching(code, tmp_path, store=code / "index-store") as watcher:
        watcher.next_run()
        for path in ("build/Gen.swift", "Generated/Model.swift", ".git/Hook.swift"):
            (code / path).parent.mkdir(exist_ok=True)
            (code / path).write_text("struct Ignored {}\n")
        (code / "Trip.generated.swift").write_text("struct Ignored {}\n")
        (code / "icon.png").write_bytes(b"\x89PNG")
        with (code / "TripStore.swift").open("a") as handle:
            handle.write(NEW_FUNCTION)
        second = watcher.next_run()
        with (code / "TripStore.swift").open("a") as handle:
            handle.write("\n// One more line.\n")
        third = watcher.next_run()
        watcher.close()

    assert second.number == 2 and [Path(p).name for p in second.changed_paths] == [
        "TripStore.swift"
    ]
    assert third.number == 3 and [Path(p).name for p in third.changed_paths] == ["TripStore.swift"]
    assert third.summary is not None and third.summary.docs_changed == 1


def test_a_failed_run_is_reported_and_the_watch_goes_on(code: Path, tmp_path: Path):
    uses: list[int] = []

    @contextmanager
    def flaky_lock() -> Iterator[None]:
        uses.append(1)
        if len(uses) == 2:
            raise IngestError("the index is busy elsewhere")
        yield

    with watching(code, tmp_path, lock=flaky_lock) as watcher:
        watcher.next_run()
        (code / "PackingList.swift").write_text(NEW_FILE)
        failed = watcher.next_run()
        with (code / "TripStore.swift").open("a") as handle:
            handle.write(NEW_FUNCTION)
        recovered = watcher.next_run()
        totals = watcher.close()

    assert failed.summary is None and failed.error == "the index is busy elsewhere"
    assert failed.to_dict() == {"run": 2, "changed_paths": 1, "error": failed.error}
    assert recovered.summary is not None
    # The failed run's change is picked up by the next one: nothing is lost.
    assert (recovered.summary.docs_new, recovered.summary.docs_changed) == (1, 1)
    assert (totals.runs, totals.failed) == (3, 1)


def test_the_initial_runs_errors_are_raised(code: Path, tmp_path: Path):
    with pytest.raises(IngestUsageError, match="unknown domain"):
        watch(
            [str(code)],
            settings_for(tmp_path),
            target=IngestTarget(store=str(tmp_path / "store"), domain="nope"),
            stop=threading.Event(),
            embedder=FakeEmbedder(),
        )


def test_only_directories_are_watched(code: Path, tmp_path: Path):
    with pytest.raises(IngestUsageError, match="--watch follows directories"):
        watch(
            [str(code / "TripStore.swift")],
            settings_for(tmp_path),
            target=IngestTarget(),
            stop=threading.Event(),
            embedder=FakeEmbedder(),
        )


@pytest.mark.parametrize(
    ("change", "path", "counts"),
    [
        (Change.added, "New.swift", True),
        (Change.modified, "docs/guide.md", True),
        (Change.modified, ".gitignore", True),
        (Change.deleted, "Old", True),  # a folder moved out, or a file: either may matter
        (Change.added, "Generated/Model.swift", False),  # .gitignore: Generated/
        (Change.added, "Trip.generated.swift", False),  # .gitignore: *.generated.swift
        (Change.modified, "node_modules/pkg/index.md", False),
        (Change.deleted, "build/Old.swift", False),
        (Change.modified, "icon.png", False),
        (Change.deleted, "store/app.sqlite-wal", False),  # the runs' own output
        (Change.added, "store/runs/ingest-app/rejects.jsonl", False),
    ],
)
def test_the_filter_counts_what_the_directory_ingest_reads(
    code: Path, change: Change, path: str, counts: bool
):
    relevant: Callable[[Change, str], bool] = change_filter([code], [code / "store"])

    assert relevant(change, str(code / path)) is counts


def test_the_filter_ignores_other_trees(code: Path, tmp_path: Path):
    relevant = change_filter([code])

    assert not relevant(Change.added, str(tmp_path / "elsewhere" / "New.swift"))


class SlowEmbedder(FakeEmbedder):
    """The fake model at a laptop's pace for long texts: 0.2 s a batch of two."""

    def __init__(self) -> None:
        super().__init__(batch_size=2)

    def _embed_batch(self, texts: list[str]):  # type: ignore[no-untyped-def]
        time.sleep(0.2)
        return super()._embed_batch(texts)


def test_an_edit_during_a_long_vector_phase_is_searchable_before_it_ends(tmp_path: Path):
    root = tmp_path / "notes"
    root.mkdir()
    for i in range(60):  # ~30 model batches: ~6 s of vector phase
        (root / f"note{i:02}.md").write_text(f"# Note {i}\n\nEntry {i} of the logbook.\n")
    with watching(root, tmp_path, embedder=SlowEmbedder()) as watcher:
        store = SQLiteStore(tmp_path / "store")
        deadline = time.monotonic() + 60
        while "app" not in store.list_indexes() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)  # inside the initial run's vector phase by now
        (root / "harbour.md").write_text("# Harbour\n\nThe quayside crane lifts containers.\n")
        saved = time.monotonic()
        found = None
        with store.open_index("app") as index:
            while time.monotonic() - saved < 20:
                if index.bm25_search("quayside crane", SearchFilter(), 3):
                    found = time.monotonic() - saved
                    pending = index.stats()["chunks"] - index.stats()["vectors"]
                    break
                time.sleep(0.05)
        assert found is not None, "the edit never became keyword-searchable"
        assert pending > 1, "found only after the initial vectors: the vector phase did not pause"
        initial = watcher.next_run()
        assert initial.summary is not None and initial.summary.vectors_paused
        # The vectors follow: the paused ones and the edit's, by the runs after.
        while True:
            run = watcher.next_run()
            assert run.summary is not None
            if run.summary.chunks_pending == 0:
                break
    with store.open_index("app") as index:
        stats = index.stats()
    assert stats["vectors"] == stats["chunks"]
