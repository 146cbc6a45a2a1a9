"""A load killed mid-way, and a reader watching a load: every document old or new, never half.

Batches of one document make every commit a visible intermediate state. The mechanism under
test: one SQLite transaction per batch of whole documents, WAL snapshots for readers, and
deletions riding with the last batch."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np
import pytest

from core.store.filters import SearchFilter
from core.store.sqlite.store import SQLiteStore
from loaders.hold import HoldPoints
from tests.support.ingest import (
    INDEX,
    NEW,
    OLD,
    IndexView,
    assert_consistent,
    copy_corpus,
    index_file,
    ingest,
    rewrite,
    store_dir,
    view,
)

EDITED = ("lighthouse.md", "sourdough.md", "tides.md")
DELETED = "beekeeping.md"


def edit_corpus(corpus: Path) -> None:
    for name in EDITED:
        rewrite(corpus / name, OLD, NEW)
    (corpus / DELETED).unlink()


@pytest.mark.slow  # a SIGKILL crash test
def test_load_killed_mid_way_leaves_a_consistent_index_that_the_next_run_completes(
    tmp_path: Path,
):
    corpus = copy_corpus(tmp_path)
    ingest(tmp_path, corpus)
    old_hashes = view(index_file(tmp_path)).documents
    edit_corpus(corpus)

    def kill_second_batch(stage: str, count: int) -> None:
        if (stage, count) == ("load", 1):
            raise RuntimeError("killed during the load")

    with pytest.raises(RuntimeError, match="killed during the load"):
        ingest(tmp_path, corpus, holds=HoldPoints(hook=kill_second_batch), docs_per_batch=1)

    states = assert_consistent(view(index_file(tmp_path)), old_hashes)
    # The first batch (one edited document) committed; the rest, the deletion included, not.
    assert sorted(states.values()) == ["new", "old", "old", "old"]
    assert f"user_codebase:{DELETED}" in states
    with SQLiteStore(store_dir(tmp_path)).open_index(INDEX) as index:
        assert len(index.bm25_search("beta", SearchFilter(), 20)) == 3
        query = np.ones(index.dim or 0, dtype=np.float32)
        # The committed document's new chunks wait for the vector phase the kill prevented.
        assert len(index.vector_search(query, SearchFilter(), 50)) == 12 - 3
        assert len(index.pending_vectors("", 50)) == 3

    finished = ingest(tmp_path, corpus, docs_per_batch=1)

    assert (finished.docs_changed, finished.docs_unchanged, finished.docs_deleted) == (2, 1, 1)
    # Each new chunk is embedded once: the 3 the killed run loaded and the 6 it did not.
    assert (finished.chunks_embedded, finished.chunks_pending) == (9, 0)
    states = assert_consistent(view(index_file(tmp_path)), old_hashes)
    assert sorted(states.values()) == ["new", "new", "new"]


@pytest.mark.slow  # a reader polling through a whole ingest in another process
def test_reader_during_ingestion_sees_each_document_old_or_new(tmp_path: Path):
    corpus = copy_corpus(tmp_path)
    ingest(tmp_path, corpus)
    path = index_file(tmp_path)
    old_hashes = view(path).documents
    edit_corpus(corpus)
    seen: list[IndexView] = []
    stop = threading.Event()
    errors: list[BaseException] = []

    def read() -> None:
        try:
            while not stop.is_set():
                seen.append(view(path))
        except BaseException as exc:  # reported by the test thread
            errors.append(exc)

    def let_the_reader_look(stage: str, count: int) -> None:
        if stage != "load":
            return
        # Before each batch, wait until the reader has read the state the last one left.
        wanted = len(seen) + 2
        deadline = time.monotonic() + 30
        while len(seen) < wanted and not errors and time.monotonic() < deadline:
            time.sleep(0.002)

    reader = threading.Thread(target=read)
    reader.start()
    try:
        ingest(tmp_path, corpus, holds=HoldPoints(hook=let_the_reader_look), docs_per_batch=1)
    finally:
        stop.set()
        reader.join()

    assert not errors, errors
    new_counts = [
        sorted(assert_consistent(snapshot, old_hashes).values()).count("new") for snapshot in seen
    ]
    # The reader saw the states between the batches, not only the first and last.
    assert {1, 2} <= set(new_counts)
