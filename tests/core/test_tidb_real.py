"""The TiDB store on a real TiDB (for example `tiup playground v8.5.1 --tiflash 1`): the shared
store contract, and what MariaDB cannot stand in for: native VECTOR columns, the HNSW index
path and the full-text search probe.

Runs when TIDB_TEST_DSN is set (tidb://root@127.0.0.1:4000/test); skipped otherwise.
"""

from __future__ import annotations

import os
import uuid

import pytest

from core.settings import Settings
from core.store.tidb.bm25 import native_fts_works
from core.store.tidb.search import VectorPlan, vector_literal
from core.store.tidb.sql import Server, fragment
from core.store.tidb.store import TiDBStore
from tests.support.store_contract import *  # noqa: F403 - the contract suite runs against TiDB
from tests.support.store_contract import ALL, DIM, MODEL, batch_of, fixture_chunks, vector_for
from tests.support.store_contract_reads import *  # noqa: F403 - the contract suite runs against TiDB
from tests.support.store_contract_references import *  # noqa: F403 - the contract suite runs against TiDB

DSN_VAR = "TIDB_TEST_DSN"

pytestmark = pytest.mark.skipif(
    not os.environ.get(DSN_VAR),
    reason=f"{DSN_VAR} is not set: point it at a TiDB >= 8.4 (e.g. tiup playground)",
)


@pytest.fixture
def store(tmp_path) -> TiDBStore:
    return TiDBStore.from_url(os.environ[DSN_VAR], Settings(staging_dir=tmp_path))


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
        os.environ[DSN_VAR], Settings(staging_dir=tmp_path), vector_plan=VectorPlan.EXACT
    ).open_index(loaded.name)
    try:
        query = vector_for("net-1")
        assert [h.chunk_id for h in loaded.vector_search(query, ALL, 3)] == [
            h.chunk_id for h in exact.vector_search(query, ALL, 3)
        ]
    finally:
        exact.close()
