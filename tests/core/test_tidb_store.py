"""The TiDB store against MariaDB standing in for TiDB: the shared store contract, run once
per vector plan (ANN over-fetch and exact scan), plus what only this store does.

Needs RAG_TEST_MYSQL_DSN (`source .ci/mariadb.sh && start_private_mariadb` exports it);
without it every test here is skipped.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from urllib.parse import urlsplit

import pymysql
import pytest

from core.settings import Settings
from core.store.contract import StoreError
from core.store.open import open_store
from core.store.tidb.search import VectorPlan
from core.store.tidb.store import TiDBIndex, TiDBStore
from sql import migrations
from tests.support.store_contract import *  # noqa: F403 - the contract suite runs against MariaDB
from tests.support.store_contract import ALL, DIM, MODEL, batch_of, fixture_chunks, ids, make_chunk
from tests.support.store_contract_pending import *  # noqa: F403 - the contract suite runs against MariaDB
from tests.support.store_contract_reads import *  # noqa: F403 - the contract suite runs against MariaDB
from tests.support.store_contract_references import *  # noqa: F403 - the contract suite runs against MariaDB

DSN_VAR = "RAG_TEST_MYSQL_DSN"

pytestmark = [
    pytest.mark.mariadb,
    pytest.mark.skipif(
        not os.environ.get(DSN_VAR),
        reason=f"{DSN_VAR} is not set: run `source .ci/mariadb.sh && start_private_mariadb`",
    ),
]


def mariadb_dsn() -> str:
    return os.environ[DSN_VAR]


def make_store(tmp_path, plan: VectorPlan = VectorPlan.AUTO, **settings) -> TiDBStore:
    base = Settings(staging_dir=tmp_path / "staging", **settings)
    return TiDBStore.from_url(mariadb_dsn(), base, vector_plan=plan)


@pytest.fixture(params=[VectorPlan.ANN, VectorPlan.EXACT], ids=["ann", "exact"])
def store(request, tmp_path) -> TiDBStore:
    return make_store(tmp_path, request.param)


@pytest.fixture
def raw() -> Iterator[pymysql.Connection]:
    """A separate connection, like another process would have."""
    from core.settings import Settings as _Settings
    from core.store.tidb.conn import connect
    from core.store.tidb.dsn import endpoint_from

    conn = connect(endpoint_from(mariadb_dsn(), _Settings()))
    yield conn
    conn.close()


def writes_to(statement: str, table_suffix: str) -> bool:
    """Whether a statement is the load of rows into the index table with that suffix, by
    either load method."""
    first_line = statement.split("\n", 1)[0]
    return first_line.startswith(("INSERT INTO", "LOAD DATA")) and table_suffix in first_line


def count(raw: pymysql.Connection, sql: str) -> int:
    with raw.cursor() as cur:
        cur.execute(sql)
        return int(cur.fetchone()[0])


# -- server and schema --------------------------------------------------------------------


def test_server_is_recognised_as_mariadb(store):
    assert store.server.value == "mariadb"
    assert "MariaDB" in store.version


def test_each_index_is_its_own_table_set(loaded, raw):
    prefix = f"rag_{loaded.name}_"
    with raw.cursor() as cur:
        cur.execute(
            "SELECT table_name FROM information_schema.tables "
            "WHERE table_schema = DATABASE() AND table_name LIKE %s",
            (prefix + "%",),
        )
        tables = {row[0][len(prefix) :] for row in cur.fetchall()}
    assert tables == {
        "meta",
        "documents",
        "chunks",
        "postings",
        "refs",
        "term_df",
        "migrations",
        "shards",
    }


def test_migrations_are_recorded_once_in_order(store, loaded, raw):
    store.open_index(loaded.name).close()
    with raw.cursor() as cur:
        cur.execute(f"SELECT version FROM rag_{loaded.name}_migrations ORDER BY version")
        assert [row[0] for row in cur.fetchall()] == [m.version for m in migrations("tidb")]
    assert loaded.stats()["schema_version"] == migrations("tidb")[-1].version


def test_on_mariadb_the_vector_column_is_text_and_search_is_exact(loaded, raw):
    column_type = count(
        raw,
        "SELECT COUNT(*) FROM information_schema.columns WHERE table_schema = DATABASE() "
        f"AND table_name = 'rag_{loaded.name}_chunks' AND column_name = 'embedding' "
        "AND data_type = 'longtext'",
    )
    assert column_type == 1
    stats = loaded.stats()
    assert (stats["vector_index"], stats["bm25"], stats["vector_index_progress"]) == (
        "exact",
        "sql",
        [],
    )


@pytest.mark.parametrize("name", ["Docs", "../x", "a-b", "", "x" * 49])
def test_invalid_index_names_are_rejected_before_any_sql(store, name):
    with pytest.raises(StoreError, match="invalid index name"):
        store.open_index(name, create=True)


def test_vectors_go_over_the_wire_as_text(loaded, raw):
    with raw.cursor() as cur:
        cur.execute(f"SELECT embedding FROM rag_{loaded.name}_chunks WHERE chunk_id = 'nav-1'")
        text = cur.fetchone()[0]
    assert text.startswith("[") and text.endswith("]") and len(text.split(",")) == DIM


def test_postings_hold_the_analysed_terms_with_frequencies(loaded, raw):
    with raw.cursor() as cur:
        cur.execute(
            f"SELECT term, tf FROM rag_{loaded.name}_postings WHERE chunk_id = 'nav-1' "
            "AND term IN ('navigationstack', 'navigation', 'stack', 'views')"
        )
        assert dict(cur.fetchall()) == {
            "navigationstack": 2,
            "navigation": 2,
            "stack": 3,
            "views": 2,
        }


def test_corpus_statistics_follow_replacements_and_deletions(loaded, raw):
    table = f"rag_{loaded.name}"
    stats_sql = f"SELECT bm25_docs * 1000000 + bm25_total_len FROM {table}_meta"
    truth_sql = f"SELECT COUNT(*) * 1000000 + SUM(body_len) FROM {table}_chunks"
    assert count(raw, stats_sql) == count(raw, truth_sql)
    loaded.apply(batch_of([make_chunk("nav-3", "doc-nav", content="short")], doc_hash="v2"))
    loaded.apply(batch_of([], delete=("doc-net",)))
    assert count(raw, stats_sql) == count(raw, truth_sql)


# -- loading --------------------------------------------------------------------------------


def test_a_chunk_id_owned_by_another_document_fails_the_batch(loaded):
    thief = make_chunk("nav-1", "doc-other")
    with pytest.raises(StoreError):
        loaded.apply(batch_of([thief]))
    assert loaded.fetch(["nav-1"])["nav-1"]["doc_id"] == "doc-nav"


def test_loading_the_same_batch_twice_leaves_the_same_rows(loaded):
    before = loaded.fetch([c.chunk_id for c in fixture_chunks()])
    loaded.apply(batch_of(fixture_chunks()))
    assert loaded.fetch([c.chunk_id for c in fixture_chunks()]) == before
    assert loaded.stats()["chunks"] == 5


def test_load_data_method_writes_the_same_rows_as_insert(tmp_path):
    (tmp_path / "staging").mkdir()
    stores = {
        method: make_store(tmp_path, tidb_load_method=method) for method in ("insert", "load_data")
    }
    rows = {}
    tricky = make_chunk(
        "t-1", "doc-t", content="tab\there\nnew line \\N back\\slash 'quote' \"dq\"", context=None
    )
    for method, store in stores.items():
        name = f"load_{method}_{uuid.uuid4().hex[:8]}"
        index = store.open_index(name, create=True)
        try:
            index.bind_model(MODEL, DIM)
            index.apply(batch_of([*fixture_chunks(), tricky]))
            rows[method] = index.fetch([c.chunk_id for c in fixture_chunks()] + ["t-1"])
            rows[method + "_bm25"] = index.bm25_search("back slash quote", ALL, 5)
        finally:
            index.close()
            store.drop_index(name)
    assert rows["insert"] == rows["load_data"]
    assert rows["insert"]["t-1"]["content"] == tricky.content
    assert rows["insert"]["t-1"]["context"] is None
    assert rows["insert_bm25"] == rows["load_data_bm25"]


# -- retries and crash recovery ---------------------------------------------------------------


def kill_connection_after(index: TiDBIndex, raw: pymysql.Connection, statements: int) -> list:
    """Make the index's connection die (server-side KILL) after `statements` executions of the
    next attempt, once; returns the list of statements seen, for assertions."""
    seen: list[str] = []
    original = pymysql.cursors.Cursor.execute
    killed = []

    def execute(cursor, query, args=None):
        if cursor.connection is index._conn and not killed:
            seen.append(query)
            if len(seen) > statements:
                killed.append(True)
                with raw.cursor() as cur:
                    cur.execute("KILL %s", (cursor.connection.thread_id(),))
        return original(cursor, query, args)

    return seen, execute


def test_a_lost_connection_mid_batch_is_retried_and_converges(loaded, raw, monkeypatch):
    new = make_chunk("nav-3", "doc-nav", content="replacement navigation page")
    seen, execute = kill_connection_after(loaded, raw, statements=3)
    monkeypatch.setattr(pymysql.cursors.Cursor, "execute", execute)
    result = loaded.apply(batch_of([new], doc_hash="v2"))
    monkeypatch.undo()
    assert len(seen) > 3  # the kill happened inside the batch's transaction
    assert result.chunks_deleted == 2
    assert set(loaded.fetch(["nav-1", "nav-2", "nav-3"])) == {"nav-3"}
    assert ids(loaded.bm25_search("replacement", ALL, 5)) == ["nav-3"]
    assert loaded.document_states()["doc-nav"].content_hash == "doc-nav-v2"


def test_a_crashed_load_rerun_converges_to_a_clean_load(store, loaded, raw):
    """A loader process that dies mid-transaction leaves nothing; the re-run then writes
    exactly what one clean run writes."""
    crashed = store.connect()
    crashed.begin()
    with crashed.cursor() as cur:  # half of a batch: the old rows deleted, no new ones yet
        cur.execute(f"DELETE FROM rag_{loaded.name}_postings WHERE doc_id = 'doc-nav'")
        cur.execute(f"DELETE FROM rag_{loaded.name}_chunks WHERE doc_id = 'doc-nav'")
    with raw.cursor() as cur:
        cur.execute("KILL %s", (crashed.thread_id(),))
    batch = batch_of([make_chunk("nav-3", "doc-nav", content="after the crash")], doc_hash="v2")
    loaded.apply(batch)
    clean_name = f"clean_{uuid.uuid4().hex[:8]}"
    clean = store.open_index(clean_name, create=True)
    try:
        clean.bind_model(MODEL, DIM)
        clean.apply(batch_of(fixture_chunks()))
        clean.apply(batch)
        chunk_ids = [c.chunk_id for c in fixture_chunks()] + ["nav-3"]
        assert loaded.fetch(chunk_ids) == clean.fetch(chunk_ids)
        assert loaded.bm25_search("crash navigation", ALL, 10) == clean.bm25_search(
            "crash navigation", ALL, 10
        )
        assert {k: v for k, v in loaded.stats().items() if k in ("chunks", "fts_rows")} == {
            k: v for k, v in clean.stats().items() if k in ("chunks", "fts_rows")
        }
    finally:
        clean.close()
        store.drop_index(clean_name)


def test_a_non_transient_error_is_not_retried(loaded, monkeypatch):
    calls = []
    original = pymysql.cursors.Cursor.execute

    def execute(cursor, query, args=None):
        text = query if isinstance(query, str) else bytes(query).decode()  # executemany: bytes
        if writes_to(text, "_chunks"):
            calls.append(query)
            raise pymysql.err.ProgrammingError(1064, "syntax error injected")
        return original(cursor, query, args)

    monkeypatch.setattr(pymysql.cursors.Cursor, "execute", execute)
    with pytest.raises(StoreError, match="syntax error injected"):
        loaded.apply(batch_of([make_chunk("x-1", "doc-x")]))
    assert len(calls) == 1


def test_readers_see_a_changed_document_whole_until_its_transaction_commits(
    loaded, raw, monkeypatch
):
    table = f"rag_{loaded.name}"
    seen_mid_batch = []
    original = pymysql.cursors.Cursor.execute

    def execute(cursor, query, args=None):
        text = query if isinstance(query, str) else bytes(query).decode()
        if cursor.connection is loaded._conn and writes_to(text, "_postings"):
            # The old chunks and postings are deleted and the new chunks written, uncommitted.
            seen_mid_batch.append(
                (
                    count(raw, f"SELECT COUNT(*) FROM {table}_chunks WHERE doc_id = 'doc-nav'"),
                    count(raw, f"SELECT COUNT(*) FROM {table}_postings WHERE doc_id = 'doc-nav'"),
                )
            )
        return original(cursor, query, args)

    with raw.cursor() as cur:
        cur.execute(f"SELECT COUNT(*) FROM {table}_postings WHERE doc_id = 'doc-nav'")
        postings_before = cur.fetchone()[0]
    monkeypatch.setattr(pymysql.cursors.Cursor, "execute", execute)
    loaded.apply(batch_of([make_chunk("nav-3", "doc-nav", content="new page")], doc_hash="v2"))
    monkeypatch.undo()
    assert seen_mid_batch and seen_mid_batch[0] == (2, postings_before)
    assert count(raw, f"SELECT COUNT(*) FROM {table}_chunks WHERE doc_id = 'doc-nav'") == 1


# -- selecting the store ----------------------------------------------------------------------


def test_messages_and_stats_never_show_the_password(store, loaded):
    password = urlsplit(mariadb_dsn()).password
    assert password and password not in store.display
    assert password not in loaded.stats()["path"] and password not in repr(loaded)


def test_open_store_routes_tidb_urls_and_the_tidb_settings(tmp_path):
    parts = urlsplit(mariadb_dsn())
    settings = Settings(
        staging_dir=tmp_path,
        tidb_host=parts.hostname,
        tidb_port=parts.port,
        tidb_user=parts.username,
        tidb_password=parts.password,
        tidb_database=parts.path.strip("/"),
    )
    by_settings = open_store(None, settings)
    by_url = open_store(mariadb_dsn(), Settings(staging_dir=tmp_path))
    assert isinstance(by_settings, TiDBStore) and isinstance(by_url, TiDBStore)
    assert by_url.location == mariadb_dsn()  # the engine matches --store by this string
    assert by_settings.list_indexes() == by_url.list_indexes()


def test_bind_model_finishes_a_binding_that_died_before_its_vector_column(store, raw):
    name = f"halfbound_{uuid.uuid4().hex[:8]}"
    index = store.open_index(name, create=True)
    try:
        with raw.cursor() as cur:  # what a process killed between claim and DDL leaves
            cur.execute(f"UPDATE rag_{name}_meta SET model_id = %s, dim = %s", (MODEL, DIM))
        index.bind_model(MODEL, DIM)
        index.apply(batch_of(fixture_chunks()))
        assert index.stats()["vectors"] == 5
    finally:
        index.close()
        store.drop_index(name)


@pytest.mark.parametrize(
    ("a", "b", "distance"),
    [("[1,1]", "[-1,-1]", 2.0), ("[1,0]", "[0,1]", 1.0), ("[1,2]", "[2,4]", 0.0)],
)
def test_the_stand_in_distance_function_gives_tidbs_cosine_distance(store, raw, a, b, distance):
    with raw.cursor() as cur:
        cur.execute("SELECT VEC_COSINE_DISTANCE(%s, %s)", (a, b))
        assert cur.fetchone()[0] == pytest.approx(distance, abs=1e-12)


def test_tls_when_asked_for_is_required_not_just_preferred(tmp_path):
    # The private MariaDB has no TLS: a store told to use TLS must refuse to connect.
    with pytest.raises(StoreError, match="cannot connect"):
        TiDBStore.from_url(mariadb_dsn() + "?ssl=true", Settings(staging_dir=tmp_path))


def test_load_data_refused_by_the_connection_falls_back_to_insert(tmp_path, monkeypatch, caplog):
    import core.store.tidb.store as tidb_store

    original = tidb_store.connect
    monkeypatch.setattr(tidb_store, "connect", lambda endpoint, **_: original(endpoint))
    store = make_store(tmp_path, tidb_load_method="load_data")
    name = f"refused_{uuid.uuid4().hex[:8]}"
    index = store.open_index(name, create=True)
    try:
        index.bind_model(MODEL, DIM)
        index.apply(batch_of(fixture_chunks()))
        assert index.stats()["chunks"] == 5
        assert "LOAD DATA LOCAL INFILE refused" in caplog.text
    finally:
        index.close()
        store.drop_index(name)
