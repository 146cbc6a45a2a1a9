"""The embedded store's full-text table: contentless (it keeps no copy of the text), kept in
step with the chunks through deletes, analyzer changes and migrations, and written with
FTS5 options chosen for loads."""

from __future__ import annotations

import numpy as np

from core.store.modes import AnalysisSite, StoreModes
from core.store.sqlite import analysis_process
from core.store.sqlite.chunk_text import ChunkText
from core.store.sqlite.index import SQLiteIndex
from core.store.sqlite.store import SQLiteStore
from sql import migrations
from tests.support import sqlite_files, store_contract
from tests.support.sqlite_files import fts_config, raw
from tests.support.store_contract import ALL, DIM, MODEL, batch_of, fixture_chunks, make_chunk

# The shared fixtures, by name.
store = sqlite_files.store
index = store_contract.index
loaded = store_contract.loaded


def bm25_ranking(index: SQLiteIndex, query: str) -> list[tuple[str, float]]:
    return [(h.chunk_id, round(h.score, 9)) for h in index.fts_bm25_search(query, ALL, 50)]


QUERIES = ["NavigationStack", "URLSession data task", "swift view state", "python"]


def test_the_full_text_table_holds_no_text(loaded):
    with raw(loaded) as conn:
        bodies = conn.execute("SELECT body FROM chunks_fts").fetchall()
    assert bodies and all(body is None for (body,) in bodies)


def test_rows_deleted_by_rewriting_and_dropping_documents_leave_no_trace(store, loaded):
    chunks = fixture_chunks()
    rewritten = [make_chunk(c.chunk_id, c.doc_id, content=c.content + " zebra") for c in chunks]
    loaded.apply(batch_of(rewritten[:3], doc_hash="v2"))
    loaded.apply(batch_of([], delete=(chunks[-1].doc_id,)))
    fresh = store.open_index("fresh", create=True)
    fresh.bind_model(*loaded._meta()[:2])
    survivors = rewritten[:3] + [c for c in chunks[3:] if c.doc_id != chunks[-1].doc_id]
    fresh.apply(batch_of(survivors))
    try:
        for query in [*QUERIES, "zebra"]:
            assert bm25_ranking(loaded, query) == bm25_ranking(fresh, query)
        with raw(loaded) as conn:
            conn.execute("INSERT INTO chunks_fts (chunks_fts) VALUES ('integrity-check')")
    finally:
        fresh.close()


def test_an_index_written_by_another_analyzer_version_is_reindexed_on_open(store, loaded):
    before = {query: bm25_ranking(loaded, query) for query in QUERIES}
    loaded.close()
    with raw(loaded) as conn:  # as if another analyzer had indexed other tokens
        conn.execute("INSERT INTO chunks_fts (chunks_fts) VALUES ('delete-all')")
        conn.execute("UPDATE meta SET fts_analyzer = 0")
    reopened = store.open_index(loaded.name, write=True)
    try:
        assert {query: bm25_ranking(reopened, query) for query in QUERIES} == before
        with raw(reopened) as conn:
            assert conn.execute("SELECT fts_analyzer FROM meta").fetchone()[0] >= 1
    finally:
        reopened.close()


def test_a_file_from_before_the_contentless_table_keeps_its_rankings(store, monkeypatch):
    import core.store.migrations as runner
    import core.store.sqlite.index as index_module
    import core.store.sqlite.schema as schema_module

    # The file of that time (before 0003_fts_contentless, up to 0007_fts_automerge), plus
    # the later tables and columns today's loader writes along (references, precision).
    older = tuple(m for m in migrations("sqlite") if not 3 <= m.version <= 7)
    with monkeypatch.context() as patch:
        patch.setattr(runner, "migrations", lambda dialect: older)
        patch.setattr(index_module, "reindex_if_analyzer_changed", lambda *args: None)
        patch.setattr(schema_module, "mark_current", lambda conn: None)
        # Code of that time stored the text as it is.
        patch.setattr(ChunkText, "encode", lambda self, conn, texts: list(texts))
        old = store.open_index("old", create=True)
        old.bind_model("m", 8)
        old.apply(batch_of(fixture_chunks(), vectors=np.eye(8, dtype=np.float32)[:5]))
        before = {query: bm25_ranking(old, query) for query in QUERIES}
        old.close()
    with raw(old) as conn:
        assert conn.execute("SELECT count(body) FROM chunks_fts").fetchone()[0] == 5
    migrated = store.open_index("old", write=True)
    try:
        assert {query: bm25_ranking(migrated, query) for query in QUERIES} == before
        with raw(migrated) as conn:
            assert conn.execute("SELECT count(body) FROM chunks_fts").fetchone()[0] == 0
    finally:
        migrated.close()


def test_the_full_text_table_buffers_a_whole_load_batch_before_writing_a_segment(index):
    assert fts_config(index)["hashsize"] >= 16 << 20


def test_the_full_text_table_merges_segments_sixteen_at_a_time(index):
    assert fts_config(index)["automerge"] == 16


def test_a_batch_analysed_by_the_child_process_is_indexed_as_one_analysed_here(store, tmp_path):
    """Large batches are analysed in a second process (core/store/sqlite/analysis_process.py),
    unless the store is opened to analyse in process."""
    base = fixture_chunks()
    copies = 1 + analysis_process.MIN_OFFLOAD_CHARS // sum(len(c.content) for c in base)
    chunks = [
        make_chunk(f"{c.chunk_id}-{n}", f"{c.doc_id}-{n}", content=c.content, context=c.context)
        for n in range(copies)
        for c in base
    ]
    offloaded = store.open_index("offloaded", create=True)
    offloaded.bind_model(MODEL, DIM)
    offloaded.apply(batch_of(chunks))
    in_process = SQLiteStore(tmp_path / "here", modes=StoreModes(analysis=AnalysisSite.IN_PROCESS))
    here = in_process.open_index("here", create=True)
    here.bind_model(MODEL, DIM)
    here.apply(batch_of(chunks))
    try:
        assert offloaded._analysis.pid is not None and here._analysis.pid is None
        rankings = {query: bm25_ranking(here, query) for query in QUERIES}
        assert {query: bm25_ranking(offloaded, query) for query in QUERIES} == rankings
        assert all(rankings[query] for query in QUERIES[:3])
    finally:
        offloaded.close()
        here.close()
