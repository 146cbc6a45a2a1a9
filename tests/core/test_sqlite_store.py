"""The embedded SQLite store: the shared store contract plus SQLite-only behaviour."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from chunkers.model import Chunk
from core.store.contract import CHUNK_SCHEMA, DOCUMENT_SCHEMA, StoreError
from core.store.filters import SearchFilter
from core.store.sqlite.full_text import delete_fts_rows
from core.store.sqlite.index import SQLiteIndex
from core.store.sqlite.schema import q, statements
from core.store.sqlite.store import SQLiteStore
from loaders.arrow_tables import chunks_to_table, documents_to_table
from sql import migrations
from tests.support import sqlite_files
from tests.support.sqlite_files import raw
from tests.support.store_contract import *  # noqa: F403 - the contract suite runs against SQLite
from tests.support.store_contract import (
    ALL,
    DIM,
    MODEL,
    batch_of,
    fixture_chunks,
    ids,
    make_chunk,
    vector_for,
)
from tests.support.store_contract_pending import *  # noqa: F403 - the contract suite runs against SQLite
from tests.support.store_contract_reads import *  # noqa: F403 - the contract suite runs against SQLite
from tests.support.store_contract_references import *  # noqa: F403 - the contract suite runs against SQLite

store = sqlite_files.store  # the shared fixture, by name

# -- files, errors -----------------------------------------------------------------------


def test_each_index_is_one_file_named_after_it(store, tmp_path):
    store.open_index("docs", create=True).close()
    assert (tmp_path / "indexes" / "docs.sqlite").is_file()


def test_journal_mode_is_wal(loaded):
    with raw(loaded) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_corrupt_file_raises_store_error_naming_the_path(store, tmp_path):
    path = tmp_path / "indexes" / "broken.sqlite"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"this is not a database, just some bytes" * 200)
    with pytest.raises(StoreError, match="broken.sqlite"):
        store.open_index("broken")


def test_uncreatable_directory_raises_store_error_naming_it(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    store = SQLiteStore(blocker / "indexes")
    with pytest.raises(StoreError, match="a-file"):
        store.open_index("main", create=True)


@pytest.mark.parametrize("name", ["../escape", "a/b", "", ".hidden", "x" * 200])
def test_invalid_index_names_are_rejected(store, name):
    with pytest.raises(StoreError):
        store.open_index(name, create=True)


def test_drop_index_closes_open_handles_and_removes_wal_files(store, tmp_path):
    index = store.open_index("temp", create=True)
    index.bind_model("m", 4)
    store.drop_index("temp")
    assert list((tmp_path / "indexes").iterdir()) == []


def test_list_indexes_of_missing_directory_is_empty(tmp_path):
    assert SQLiteStore(tmp_path / "nothing-here").list_indexes() == []


@pytest.mark.slow  # 300 creations raced against a reader
def test_a_new_index_file_is_never_opened_half_made(tmp_path):
    """Another handle that opens the file the moment it exists (an MCP server warming up
    while its watcher's first ingest creates the index) finds it complete, and neither side
    fails. The race this guards against struck about once in 30-140 creations."""
    failures: list[Exception] = []
    for trial in range(300):
        directory = tmp_path / f"t{trial}"
        path = directory / "docs.sqlite"

        def open_when_it_appears(directory: Path = directory, path: Path = path) -> None:
            while not path.exists():
                pass
            try:
                SQLiteStore(directory).open_index("docs").close()
            except StoreError as exc:
                failures.append(exc)

        opener = threading.Thread(target=open_when_it_appears)
        opener.start()
        try:
            SQLiteStore(directory).open_index("docs", create=True).close()
        except StoreError as exc:
            failures.append(exc)
            path.touch()  # let the opener finish
        opener.join(timeout=30)
        # and the temporary file it was made in is gone (-wal/-shm may stay: two handles
        # that close at once each leave the WAL to the other)
        assert [p.name for p in directory.iterdir() if not p.name.startswith("docs.sqlite")] == []
    assert failures == []


# -- migrations ------------------------------------------------------------------------------


def test_migrations_are_applied_once_across_reopens(store):
    first = store.open_index("m", create=True)
    first.close()
    with raw(first) as conn:
        before = conn.execute("SELECT version, applied_at FROM schema_migrations").fetchall()
    store.open_index("m").close()
    with raw(first) as conn:
        after = conn.execute("SELECT version, applied_at FROM schema_migrations").fetchall()
    assert before == after
    assert [v for v, _ in after] == [m.version for m in migrations("sqlite")]


def test_stats_report_schema_version_and_file_size(loaded):
    stats = loaded.stats()
    assert stats["schema_version"] == migrations("sqlite")[-1].version
    assert stats["file_bytes"] > 0


def test_statement_splitter_splits_only_at_statement_ends():
    script = "-- head\nSELECT 'a;b';\n-- between\nSELECT 2; -- tail\n-- trailing comment\n"
    parts = statements(script)
    assert len(parts) == 2
    assert "SELECT 'a;b';" in parts[0] and parts[1].startswith("-- between\nSELECT 2;")


# -- snapshot isolation ----------------------------------------------------------------------


def test_readers_see_old_state_while_a_write_transaction_is_open(store, loaded):
    reader = store.open_index(loaded.name)
    try:
        # The same statements apply() runs, held open mid-transaction.
        with loaded._writing() as conn:
            delete_fts_rows(conn, loaded._text, {"doc_ids": json.dumps(["doc-nav"])})
            conn.execute(q("delete_vectors_of_docs"), {"doc_ids": json.dumps(["doc-nav"])})
            conn.execute(q("delete_chunks_of_docs"), {"doc_ids": json.dumps(["doc-nav"])})
            conn.execute(q("meta_bump_generation"))
            assert ids(reader.vector_search(vector_for("nav-1"), ALL, 1)) == ["nav-1"]
            assert "nav-1" in ids(reader.bm25_search("NavigationStack", ALL, 5))
            assert set(reader.fetch(["nav-1", "nav-2"])) == {"nav-1", "nav-2"}
        assert reader.fetch(["nav-1"]) == {}
        assert "nav-1" not in ids(reader.vector_search(vector_for("nav-1"), ALL, 5))
    finally:
        reader.close()


def test_a_read_transaction_keeps_its_snapshot_while_a_batch_commits(loaded):
    with raw(loaded) as reader:
        reader.execute("BEGIN")
        count = "SELECT count(*) FROM chunks"
        assert reader.execute(count).fetchone()[0] == 5
        loaded.apply(batch_of([], delete=("doc-nav",)))  # must not wait for the reader
        assert reader.execute(count).fetchone()[0] == 5
        reader.execute("COMMIT")
        assert reader.execute(count).fetchone()[0] == 3


def test_concurrent_searches_during_loads_never_see_half_a_document(store, index):
    index.apply(batch_of([make_chunk(f"a{i}", "doc", chunk_index=i) for i in range(4)]))
    reader = store.open_index(index.name)
    seen: list[set[str]] = []
    stop = threading.Event()

    def search() -> None:
        while not stop.is_set():
            found = set(ids(reader.bm25_search("content", ALL, 50)))
            seen.append({c[0] for c in found})

    thread = threading.Thread(target=search)
    thread.start()
    try:
        for round_ in range(30):
            prefix = "b" if round_ % 2 == 0 else "a"
            index.apply(
                batch_of([make_chunk(f"{prefix}{i}", "doc", chunk_index=i) for i in range(4)])
            )
    finally:
        stop.set()
        thread.join()
        reader.close()
    assert seen and all(len(s) == 1 for s in seen)


# -- in-memory vectors -----------------------------------------------------------------------


def test_vector_snapshot_is_reused_until_the_index_changes(loaded):
    first = loaded.snapshot()
    assert loaded.snapshot() is first
    loaded.apply(batch_of([make_chunk("z1", "doc-z")]))
    assert loaded.snapshot() is not first


def test_recreated_index_file_does_not_reuse_the_old_snapshot(store, loaded):
    name = loaded.name
    loaded.vector_search(vector_for("nav-1"), ALL, 1)
    store.drop_index(name)
    fresh = store.open_index(name, create=True)
    try:
        fresh.bind_model("contract-model", 16)
        assert fresh.vector_search(vector_for("nav-1"), ALL, 5) == []
    finally:
        fresh.close()


def test_query_vector_of_wrong_dimension_raises(loaded):
    with pytest.raises(StoreError):
        loaded.vector_search(np.ones(3, dtype=np.float32), ALL, 5)


def test_apply_before_bind_model_raises(store):
    index = store.open_index("unbound", create=True)
    with pytest.raises(StoreError, match="bind_model"):
        index.apply(batch_of([make_chunk("c", "d")]))
    index.close()


def test_stored_vectors_are_normalised(index):
    chunk = make_chunk("c", "d")
    index.apply(batch_of([chunk], vectors=np.full((1, 16), 3.0, dtype=np.float32)))
    assert np.linalg.norm(index.snapshot().matrix[0]) == pytest.approx(1.0, abs=1e-6)


def test_chunk_whose_document_is_not_in_the_batch_is_rejected(index):
    batch = batch_of([make_chunk("c", "d")])
    batch.documents = documents_to_table([{"doc_id": "other", "content_hash": "h"}])
    with pytest.raises(StoreError, match="not in the batch"):
        index.apply(batch)


# -- Arrow batches ---------------------------------------------------------------------------


def test_chunks_to_table_has_the_chunk_schema_and_json_columns():
    chunks = fixture_chunks()
    table = chunks_to_table(chunks)
    assert table.schema.equals(CHUNK_SCHEMA)
    row = table.slice(4, 1).to_pylist()[0]
    assert json.loads(row["metadata"]) == {"lang": "en", "rank": 3}
    assert json.loads(row["platforms"]) == {"ios": {"min": "16.0", "max": None}}
    assert table.column("framework_tags").to_pylist()[0] == ["SwiftUI"]


def test_chunks_to_table_of_nothing_is_empty_with_schema():
    assert chunks_to_table([]).schema.equals(CHUNK_SCHEMA)
    assert chunks_to_table([]).num_rows == 0


def test_chunks_to_table_reports_the_column_that_does_not_fit():
    bad = Chunk(**{**make_chunk("c", "d").__dict__, "start_line": "ten"})
    with pytest.raises(ValueError, match="start_line"):
        chunks_to_table([bad])


def test_documents_to_table_fills_missing_columns_and_encodes_metadata():
    table = documents_to_table([{"doc_id": "d", "content_hash": "h", "metadata": {"a": 1}}])
    assert table.schema.equals(DOCUMENT_SCHEMA)
    assert table.to_pylist()[0] == {
        "doc_id": "d",
        "source_path": None,
        "content_hash": "h",
        "mtime": None,
        "last_verified": None,
        "metadata": '{"a": 1}',
    }


def test_documents_table_keeps_metadata_that_is_already_json():
    table = documents_to_table([{"doc_id": "d", "content_hash": "h", "metadata": '{"b": 2}'}])
    assert table.column("metadata").to_pylist() == ['{"b": 2}']
    assert isinstance(table, pa.Table)


def test_filter_with_no_restriction_scores_every_row(random_loaded):
    index, chunks = random_loaded
    assert index.snapshot().mask(SearchFilter()) is None
    assert len(index.vector_search(vector_for("q"), SearchFilter(), 10_000)) == len(chunks)


def test_stats_counts_follow_writes_and_include_fts_rows(loaded):
    assert loaded.stats()["fts_rows"] == 5
    loaded.apply(batch_of([], delete=("doc-nav",)))
    stats = loaded.stats()
    assert (stats["chunks"], stats["fts_rows"], stats["vectors"]) == (3, 3, 3)


def test_closing_the_last_handle_checkpoints_and_removes_the_wal(store, tmp_path):
    index = store.open_index("w", create=True)
    index.bind_model("m", 16)
    index.apply(batch_of([make_chunk("c", "d")]))
    index.close()
    assert not (tmp_path / "indexes" / "w.sqlite-wal").exists()


# -- vectors at rest ---------------------------------------------------------------------


def test_vectors_are_stored_as_half_precision(loaded):
    with raw(loaded) as conn:
        widths = {n for (n,) in conn.execute("SELECT length(embedding) FROM vectors")}
    assert widths == {2 * loaded.dim}


def test_vectors_of_an_older_file_in_single_precision_still_search_alike(loaded):
    before = [(h.chunk_id, h.score) for h in loaded.vector_search(vector_for("py-1"), ALL, 5)]
    with raw(loaded) as conn:
        rows = conn.execute("SELECT chunk_id, embedding FROM vectors").fetchall()
        # Half of the rows rewritten as an older version wrote them: float32.
        for chunk_id, blob in rows[::2]:
            single = np.frombuffer(blob, dtype="<f2").astype("<f4").tobytes()
            conn.execute("UPDATE vectors SET embedding = ? WHERE chunk_id = ?", (single, chunk_id))
        conn.execute("UPDATE meta SET generation = generation + 1")
    after = [(h.chunk_id, h.score) for h in loaded.vector_search(vector_for("py-1"), ALL, 5)]
    assert [c for c, _ in after] == [c for c, _ in before]
    assert [s for _, s in after] == pytest.approx([s for _, s in before], abs=1e-6)


def test_a_self_match_still_scores_one_after_the_rounding(loaded):
    hit = loaded.vector_search(vector_for("py-1"), ALL, 1)[0]
    assert hit.score == pytest.approx(1.0, abs=1e-6)


def test_vectors_given_later_renew_the_vector_matrix_but_not_the_keyword_postings(tmp_path):
    # The keyword postings are rebuilt per `generation` (~12 s at 100k chunks); a vector
    # phase commits every page, and no page changes any text.
    writer = SQLiteIndex(tmp_path / "i.sqlite", create=True)
    writer.bind_model(MODEL, DIM)
    chunks = fixture_chunks()
    writer.apply(batch_of(chunks, without_vectors=True))
    reader = SQLiteIndex(tmp_path / "i.sqlite")
    assert reader.vector_search(vector_for(chunks[0].chunk_id), ALL, 1) == []
    before = writer.stats()
    target = chunks[0]
    vector = vector_for(target.chunk_id)[None, :]
    assert writer.put_vectors([target.chunk_id], [target.content_hash], vector) == 1
    after = writer.stats()
    assert after["generation"] == before["generation"]
    assert after["vector_generation"] == before["vector_generation"] + 1
    assert ids(reader.vector_search(vector_for(target.chunk_id), ALL, 1)) == [target.chunk_id]
    reader.close()
    writer.close()


def test_every_search_hit_names_its_chunks_document(loaded):
    # Fusion ranks documents by their best chunk in each leg from these, reading no row.
    hits = [
        *loaded.vector_search(vector_for("net-1"), ALL, 10),
        *loaded.bm25_search("network", ALL, 10),
        *loaded.fts_bm25_search("network", ALL, 10),
    ]
    stored = loaded.fetch_light([h.chunk_id for h in hits])
    assert hits
    assert {h.chunk_id: h.doc_id for h in hits} == {c: r["doc_id"] for c, r in stored.items()}
