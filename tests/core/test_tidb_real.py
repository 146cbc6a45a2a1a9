"""The TiDB store on a real TiDB (for example `tiup playground v8.5.1 --tiflash 1`): the shared
store contract, and what MariaDB cannot stand in for: native VECTOR columns, the HNSW index
path and the full-text search probe.

Runs when TIDB_TEST_DSN (or RAG_TEST_TIDB_DSN) is set (tidb://root@127.0.0.1:4000/test);
skipped otherwise. The issue-30 tests at the end check on a cluster what
tests/core/test_tidb_like.py can only reproduce on the stand-in, or not at all.
"""

from __future__ import annotations

import os
import uuid

import pytest

from core.settings import Settings
from core.store.filters import SearchFilter
from core.store.tidb.bm25 import native_fts_works
from core.store.tidb.index_search import filter_sql
from core.store.tidb.search import VectorPlan, vector_literal
from core.store.tidb.sql import Server, fragment
from core.store.tidb.store import TiDBStore
from tests.support.store_contract import *  # noqa: F403 - the contract suite runs against TiDB
from tests.support.store_contract import (
    ALL,
    DIM,
    MODEL,
    batch_of,
    fixture_chunks,
    make_chunk,
    vector_for,
)
from tests.support.store_contract_pending import *  # noqa: F403 - the contract suite runs against TiDB
from tests.support.store_contract_reads import *  # noqa: F403 - the contract suite runs against TiDB
from tests.support.store_contract_references import *  # noqa: F403 - the contract suite runs against TiDB

DSN_VARS = ("TIDB_TEST_DSN", "RAG_TEST_TIDB_DSN")
DSN = next((os.environ[v] for v in DSN_VARS if os.environ.get(v)), "")

pytestmark = pytest.mark.skipif(
    not DSN,
    reason=f"{' / '.join(DSN_VARS)} not set: point it at a TiDB >= 8.4 (e.g. tiup playground)",
)


@pytest.fixture
def store(tmp_path) -> TiDBStore:
    return TiDBStore.from_url(DSN, Settings(staging_dir=tmp_path))


def show_create(index) -> str:
    with index._conn.cursor() as cur:
        cur.execute(f"SHOW CREATE TABLE {index.tables.names()['chunks']}")
        return cur.fetchone()[1]


def test_server_is_recognised_as_tidb(store):
    assert store.server is Server.TIDB and "TiDB" in store.version


def test_embedding_is_a_native_fixed_dimension_vector_column(loaded):
    assert f"vector({DIM})" in show_create(loaded).lower()


def test_framework_tags_have_the_multi_valued_index(loaded):
    ddl = show_create(loaded).lower()
    assert "framework_tags_idx" in ddl and "array" in ddl


def test_the_vector_index_mode_matches_the_clusters_tiflash(loaded):
    stats = loaded.stats()
    with loaded._conn.cursor() as cur:
        cur.execute("SELECT COUNT(*) FROM information_schema.cluster_info WHERE type = 'tiflash'")
        has_tiflash = cur.fetchone()[0] > 0
    assert stats["vector_index"] == ("hnsw" if has_tiflash else "exact")
    if has_tiflash:
        assert any(row["index_kind"] for row in stats["vector_index_progress"])


def test_the_ann_query_shape_uses_the_hnsw_index(loaded):
    if loaded.stats()["vector_index"] != "hnsw":
        pytest.skip("no TiFlash in this cluster: no HNSW index to use")
    sql = loaded._sql("vector_ann_candidates", filter=fragment("filter_predicate", loaded.tables))
    params = {
        "query": vector_literal(vector_for("nav-1"), DIM),
        "k": 5,
        "fetch": 100,
        **ALL.sql_params(),
    }
    with loaded._conn.cursor() as cur:
        cur.execute("EXPLAIN " + sql, params)
        plan = "\n".join(str(row) for row in cur.fetchall())
    assert "annIndex" in plan


def test_fts_probe_answers_and_leaves_no_probe_table(store):
    conn = store.connect()
    try:
        assert isinstance(native_fts_works(conn), bool)
        with conn.cursor() as cur:
            cur.execute("SHOW TABLES LIKE 'rag_fts_probe'")
            assert cur.fetchall() == ()
    finally:
        conn.close()


def test_bm25_scores_on_either_path_rank_the_matching_chunk_first(store):
    name = f"real_{uuid.uuid4().hex[:8]}"
    index = store.open_index(name, create=True)
    try:
        index.bind_model(MODEL, DIM)
        index.apply(batch_of(fixture_chunks()))
        hits = index.bm25_search("NavigationStack", ALL, 5)
        assert hits[0].chunk_id == "nav-1" and hits[0].score > 0
    finally:
        index.close()
        store.drop_index(name)


def test_ann_plan_and_exact_plan_agree_without_a_filter(tmp_path, loaded):
    exact = TiDBStore.from_url(
        DSN, Settings(staging_dir=tmp_path), vector_plan=VectorPlan.EXACT
    ).open_index(loaded.name)
    try:
        query = vector_for("net-1")
        assert [h.chunk_id for h in loaded.vector_search(query, ALL, 3)] == [
            h.chunk_id for h in exact.vector_search(query, ALL, 3)
        ]
    finally:
        exact.close()


# -- issue 30: what only a real TiDB can show --------------------------------------------------


def scratch(store: TiDBStore, prefix: str):
    name = f"{prefix}_{uuid.uuid4().hex[:8]}"
    index = store.open_index(name, create=True)
    index.bind_model(MODEL, DIM)
    return name, index


def plan_of(index, sql: str, params: dict) -> str:
    with index._conn.cursor() as cur:
        cur.execute("EXPLAIN " + sql, params)
        return "\n".join(str(row) for row in cur.fetchall())


def test_a_zero_vectors_cosine_distance_is_null(store):
    conn = store.connect()
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT VEC_COSINE_DISTANCE('[0,0,0]', '[1,0,0]')")
            assert cur.fetchone()[0] is None
    finally:
        conn.close()


def test_the_ann_query_reads_tiflash_even_on_a_tiny_table(loaded):
    if loaded.stats()["vector_index"] != "hnsw":
        pytest.skip("no TiFlash in this cluster")
    sql = loaded._sql("vector_ann_candidates", filter=fragment("filter_predicate", loaded.tables))
    params = {"query": vector_literal(vector_for("nav-1"), DIM), "k": 5, "fetch": 100}
    plan = plan_of(loaded, sql, {**params, **ALL.sql_params()})
    assert "tiflash" in plan.lower() and "annIndex" in plan


def test_a_large_load_is_compacted_into_the_vector_index(tmp_path):
    store = TiDBStore.from_url(DSN, Settings(staging_dir=tmp_path, tidb_compact_after_rows=1))
    name, index = scratch(store, "compact")
    try:
        if index.stats()["vector_index"] != "hnsw":
            pytest.skip("no TiFlash in this cluster")
        index.apply(batch_of(fixture_chunks()))
        progress = index.stats()["vector_index_progress"]
        assert progress and all(row["rows_delta_not_indexed"] == 0 for row in progress)
    finally:
        index.close()
        store.drop_index(name)


def test_two_loaders_of_one_new_document_both_succeed(store):
    import threading

    name, first = scratch(store, "race")
    second = store.open_index(name)
    errors: list[BaseException] = []
    batch = batch_of([make_chunk("new-1", "doc-new"), make_chunk("new-2", "doc-new")])

    def load(index) -> None:
        try:
            index.apply(batch)
        except BaseException as exc:
            errors.append(exc)

    try:
        threads = [threading.Thread(target=load, args=(i,)) for i in (first, second)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        assert errors == []
        assert first.stats()["chunks"] == 2 and first.stats()["fts_rows"] == 2
    finally:
        first.close()
        second.close()
        store.drop_index(name)


def test_the_vector_index_is_created_by_the_load_after_a_crash(store):
    name, index = scratch(store, "crash")
    try:
        if index.stats()["vector_index"] != "hnsw":
            pytest.skip("no TiFlash in this cluster")
        with index._conn.cursor() as cur:  # a binder killed after the column, before the index
            cur.execute(f"ALTER TABLE rag_{name}_chunks DROP INDEX embedding_hnsw")
            cur.execute(
                f"UPDATE rag_{name}_meta SET vector_index = 'exact', capabilities_at = NULL"
            )
        index.bind_model(MODEL, DIM)
        assert index.stats()["vector_index"] == "hnsw"
    finally:
        index.close()
        store.drop_index(name)


def test_an_index_with_native_full_text_search_is_dropped_whole(store):
    name, index = scratch(store, "ftsdrop")
    index.apply(batch_of(fixture_chunks()))
    native = index.stats()["bm25"] == "native"
    index.close()
    if not native:
        store.drop_index(name)
        pytest.skip("no native full-text search here (TiDB Cloud Starter only)")
    store.drop_index(name)
    assert name not in store.list_indexes()
    conn = store.connect()
    try:
        with conn.cursor() as cur:
            cur.execute("SHOW TABLES LIKE %s", (f"rag_{name}_%",))
            assert cur.fetchall() == ()
    finally:
        conn.close()


# -- issue 30, item 6: the keyword leg's bounded reads and the frameworks filter's index ------


def test_a_query_term_is_a_limited_backward_read_of_the_impact_index(loaded):
    """TopN/Limit push-down (docs: topn-limit-push-down) over an index that covers the
    columns (choose-index: IndexReader): each term reads at most per_term index entries."""
    read = fragment("bm25_term_postings", loaded.tables, term="%(t)s")
    with loaded._conn.cursor() as cur:
        cur.execute("EXPLAIN " + read, {"t": "navigation", "per_term": 20})
        plan = "\n".join(" | ".join(str(v) for v in row) for row in cur.fetchall())
    assert "term_impact_idx" in plan and "IndexReader" in plan, plan
    assert "keep order:true, desc" in plan, plan
    assert "Limit" in plan and "cop[tikv]" in plan, plan
    assert "Sort" not in plan and "TopN" not in plan and "IndexLookUp" not in plan, plan


def test_the_frameworks_filter_reads_the_multi_valued_index(loaded):
    """Rendered only when asked for, the frameworks rule is a plain JSON_OVERLAPS that TiDB
    can serve from framework_tags_idx (choose-index: use multi-valued indexes)."""
    filt = SearchFilter(frameworks_any=("SwiftUI",))
    sql = loaded._sql("vector_exact_candidates", filter=filter_sql(loaded.tables, filt))
    # The hint asks for the index without forcing a plan: TiDB ignores it (with a warning)
    # where the predicate cannot be served by the index, as in `(x IS NULL OR JSON_OVERLAPS)`.
    # Cost alone may prefer a full scan of a table this small.
    head = "SELECT c.chunk_id, VEC_COSINE_DISTANCE"
    assert head in sql
    sql = sql.replace(
        head, "SELECT /*+ USE_INDEX_MERGE(c, framework_tags_idx) */ c.chunk_id, VEC_COSINE_DISTANCE"
    )
    params = {"query": vector_literal(vector_for("nav-1"), DIM), "k": 5, **filt.sql_params()}
    with loaded._conn.cursor() as cur:
        cur.execute("EXPLAIN " + sql, params)
        plan = "\n".join(" | ".join(str(v) for v in row) for row in cur.fetchall())
    assert "framework_tags_idx" in plan, plan
