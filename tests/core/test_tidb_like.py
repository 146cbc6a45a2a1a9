"""Where a real TiDB behaves differently from MariaDB, reproduced on the MariaDB stand-in
(issue 30): TiDB's transient error codes, raised by the server through the real driver
(`SIGNAL ... MYSQL_ERRNO`); loaders without gap locks (READ COMMITTED, which takes none);
TiDB's refusal to drop a table that has a full-text index; all-zero vectors, whose cosine
distance is NULL; connections dropped while idle (a short `wait_timeout`).

What cannot be produced here (the HNSW index, TiFlash compaction, native full-text search)
is covered by tests/core/test_tidb_real.py against a real cluster.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import numpy as np
import pymysql
import pytest

from core.settings import Settings
from core.store.contract import StoreError
from core.store.tidb.conn import connect
from core.store.tidb.dsn import endpoint_from
from core.store.tidb.rows import ZeroVector
from core.store.tidb.search import VectorPlan
from core.store.tidb.store import TiDBIndex, TiDBStore
from tests.core.test_tidb_store import make_store, mariadb_dsn, pytestmark  # noqa: F401 - same skip and marker
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

SIGNAL = "SIGNAL SQLSTATE 'HY000' SET MYSQL_ERRNO = %s, MESSAGE_TEXT = %s"


def text_of(query: Any) -> str:
    return query if isinstance(query, str) else bytes(query).decode()  # executemany: bytes


def server_error_instead(
    monkeypatch: pytest.MonkeyPatch,
    conn: Callable[[], Any],
    matches: Callable[[str], bool],
    code: int,
    message: str,
    times: int = 1,
) -> list[str]:
    """The next `times` statements on connection `conn()` that `matches` accepts are
    replaced by a SIGNAL of error `code`: the server answers with that error and PyMySQL
    raises it as it would TiDB's. Returns the statements replaced."""
    replaced: list[str] = []
    original = pymysql.cursors.Cursor.execute

    def execute(cursor: Any, query: Any, args: Any = None) -> Any:
        text = text_of(query)
        if cursor.connection is conn() and len(replaced) < times and matches(text):
            replaced.append(text)
            return original(cursor, SIGNAL, (code, message))
        return original(cursor, query, args)

    monkeypatch.setattr(pymysql.cursors.Cursor, "execute", execute)
    return replaced


def chunk_write(text: str) -> bool:
    first = text.split("\n", 1)[0]
    return first.startswith(("INSERT INTO", "LOAD DATA")) and "_chunks" in first


@pytest.fixture
def store(tmp_path) -> TiDBStore:
    (tmp_path / "staging").mkdir()
    return make_store(tmp_path, VectorPlan.EXACT)


@pytest.fixture
def index(store) -> Iterator[TiDBIndex]:
    name = f"like_{uuid.uuid4().hex[:10]}"
    opened = store.open_index(name, create=True)
    opened.bind_model(MODEL, DIM)
    yield opened
    opened.close()
    if name in store.list_indexes():
        store.drop_index(name)


@pytest.fixture
def raw() -> Iterator[pymysql.Connection]:
    """A separate connection, like another process would have."""
    conn = connect(endpoint_from(mariadb_dsn(), Settings()))
    yield conn
    conn.close()


def count(conn: pymysql.Connection, sql: str) -> int:
    with conn.cursor() as cur:
        cur.execute(sql)
        return int(cur.fetchone()[0])


# -- 1. TiDB's documented transient errors -------------------------------------------------


@pytest.mark.parametrize(
    ("code", "message"),
    [
        (8028, "Information schema is changed during the execution of the statement"),
        (8005, "Write conflict, txnStartTS is stale"),
        (9004, "Resolve lock timeout"),
        (9012, "TiFlash server timeout"),
        (9013, "TiFlash server is busy"),
        (1105, "Information schema is changed. [try again later]"),
    ],
)
def test_tidbs_documented_transient_errors_retry_the_load(index, monkeypatch, code, message):
    replaced = server_error_instead(monkeypatch, lambda: index._conn, chunk_write, code, message)
    result = index.apply(batch_of(fixture_chunks()))
    monkeypatch.undo()
    assert replaced and result.chunks_written == 5
    assert set(index.fetch(["nav-1", "net-1"])) == {"nav-1", "net-1"}


def test_a_tiflash_busy_search_is_retried(index, monkeypatch):
    index.apply(batch_of(fixture_chunks()))
    replaced = server_error_instead(
        monkeypatch,
        lambda: index._conn,
        lambda text: "VEC_COSINE_DISTANCE" in text,
        9013,
        "TiFlash server is busy",
    )
    hits = index.vector_search(vector_for("nav-1"), ALL, 3)
    assert replaced and ids(hits)[0] == "nav-1"


def test_another_1105_is_a_failure_not_retried(index, monkeypatch):
    replaced = server_error_instead(
        monkeypatch, lambda: index._conn, chunk_write, 1105, "other unknown error", times=99
    )
    with pytest.raises(StoreError, match="other unknown error"):
        index.apply(batch_of(fixture_chunks()))
    assert len(replaced) == 1


def test_a_duplicate_key_is_retried_once_and_then_fails(index, monkeypatch):
    replaced = server_error_instead(
        monkeypatch, lambda: index._conn, chunk_write, 1062, "Duplicate entry", times=99
    )
    with pytest.raises(StoreError, match="Duplicate entry"):
        index.apply(batch_of(fixture_chunks()))
    assert len(replaced) == 2


def test_a_single_duplicate_key_race_converges(index, monkeypatch):
    replaced = server_error_instead(monkeypatch, lambda: index._conn, chunk_write, 1062, "Dup")
    result = index.apply(batch_of(fixture_chunks()))
    assert replaced and result.chunks_written == 5


# -- 2. two loaders of one new document, without gap locks -----------------------------------


def test_two_loaders_of_one_new_document_are_serialised(store, index, raw, monkeypatch):
    """TiDB takes no gap locks, so locking a new document's (absent) chunks locks nothing.
    READ COMMITTED takes none on MariaDB either; both loaders are held at their chunk write
    until the other arrives there too (or cannot, being blocked on a lock)."""
    second = store.open_index(index.name)
    loaders = [index, second]
    for loader in loaders:
        with loader._conn.cursor() as cur:
            cur.execute("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED")
    arrived = {id(loader._conn): threading.Event() for loader in loaders}
    original = pymysql.cursors.Cursor.execute

    def execute(cursor: Any, query: Any, args: Any = None) -> Any:
        mine = arrived.get(id(cursor.connection))
        if mine is not None and chunk_write(text_of(query)):
            mine.set()
            for other in arrived.values():
                other.wait(timeout=2.0)  # the other loader is blocked: go on alone
        return original(cursor, query, args)

    monkeypatch.setattr(pymysql.cursors.Cursor, "execute", execute)
    batch = batch_of([make_chunk("new-1", "doc-new"), make_chunk("new-2", "doc-new")])
    errors: list[BaseException] = []

    def load(loader: TiDBIndex) -> None:
        try:
            loader.apply(batch)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=load, args=(loader,)) for loader in loaders]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    monkeypatch.undo()
    second.close()
    assert errors == []
    table = f"rag_{index.name}"
    assert count(raw, f"SELECT COUNT(*) FROM {table}_chunks WHERE doc_id = 'doc-new'") == 2
    # The second loader replaced the first one's chunks: the corpus counts them once.
    assert count(raw, f"SELECT bm25_docs FROM {table}_meta") == 2


# -- 3. dropping an index ------------------------------------------------------------------


def test_a_drop_interrupted_half_way_is_finished_by_dropping_again(store, index, raw, monkeypatch):
    index.apply(batch_of(fixture_chunks()))
    index.close()
    original = pymysql.cursors.Cursor.execute
    failed: list[str] = []

    def execute(cursor: Any, query: Any, args: Any = None) -> Any:
        text = text_of(query)
        if not failed and text.startswith("DROP TABLE") and text.endswith("_chunks"):
            failed.append(text)
            return original(cursor, SIGNAL, (1105, "injected failure of DROP TABLE"))
        return original(cursor, query, args)

    monkeypatch.setattr(pymysql.cursors.Cursor, "execute", execute)
    with pytest.raises(StoreError, match="injected failure"):
        store.drop_index(index.name)
    monkeypatch.undo()
    assert index.name in store.list_indexes()
    store.drop_index(index.name)
    assert index.name not in store.list_indexes()
    tables_left = count(
        raw,
        "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() "
        f"AND table_name LIKE 'rag\\_{index.name}\\_%'",
    )
    assert tables_left == 0
    again = store.open_index(index.name, create=True)
    try:
        assert again.model_id is None and again.stats()["chunks"] == 0
    finally:
        again.close()
        store.drop_index(index.name)


def test_a_table_with_a_full_text_index_is_dropped_after_that_index(store, index, raw, monkeypatch):
    """TiDB refuses DROP TABLE while the table has a full-text index; so does the stand-in
    here, answering as TiDB would."""
    chunks = f"rag_{index.name}_chunks"
    with raw.cursor() as cur:
        cur.execute(f"ALTER TABLE {chunks} ADD FULLTEXT INDEX body_fts (body)")
    index.close()
    original = pymysql.cursors.Cursor.execute

    def execute(cursor: Any, query: Any, args: Any = None) -> Any:
        text = text_of(query)
        if text.startswith("DROP TABLE") and text.endswith(chunks) and has_fulltext(raw, chunks):
            return original(cursor, SIGNAL, (8200, "Unsupported drop table with fulltext index"))
        return original(cursor, query, args)

    monkeypatch.setattr(pymysql.cursors.Cursor, "execute", execute)
    store.drop_index(index.name)
    monkeypatch.undo()
    assert index.name not in store.list_indexes()
    assert (
        count(raw, f"SELECT COUNT(*) FROM information_schema.tables WHERE table_name = '{chunks}'")
        == 0
    )


def has_fulltext(conn: pymysql.Connection, table: str) -> bool:
    return bool(
        count(
            conn,
            "SELECT COUNT(*) FROM information_schema.statistics WHERE table_schema = DATABASE() "
            f"AND table_name = '{table}' AND index_type = 'FULLTEXT'",
        )
    )


# -- 4. all-zero vectors -------------------------------------------------------------------


def test_a_batch_with_an_all_zero_vector_is_refused_naming_the_chunk(index):
    chunks = fixture_chunks()
    batch = batch_of(chunks)
    vectors = np.array(batch.vectors, copy=True)
    vectors[2] = 0.0
    with pytest.raises(ZeroVector, match=chunks[2].chunk_id):
        index.apply(replace(batch, vectors=vectors))
    assert index.stats()["chunks"] == 0


@pytest.mark.parametrize("plan", [VectorPlan.EXACT, VectorPlan.ANN], ids=["exact", "ann"])
def test_a_stored_zero_vector_is_left_out_of_vector_search(tmp_path, raw, plan):
    """A zero vector written before loads refused them: its distance is NULL, which sorts
    first; the search leaves it out and still returns k hits."""
    store = make_store(tmp_path, plan)
    name = f"zero_{uuid.uuid4().hex[:10]}"
    index = store.open_index(name, create=True)
    try:
        index.bind_model(MODEL, DIM)
        index.apply(batch_of(fixture_chunks()))
        zero = "[" + ",".join(["0"] * DIM) + "]"
        with raw.cursor() as cur:
            cur.execute(
                f"UPDATE rag_{name}_chunks SET embedding = %s WHERE chunk_id = 'nav-2'", (zero,)
            )
        hits = index.vector_search(vector_for("nav-1"), ALL, 3)
        assert len(hits) == 3 and "nav-2" not in ids(hits)
        assert all(np.isfinite(h.score) for h in hits)
    finally:
        index.close()
        store.drop_index(name)


def test_an_all_zero_query_vector_finds_nothing(index):
    index.apply(batch_of(fixture_chunks()))
    assert index.vector_search(np.zeros(DIM, dtype=np.float32), ALL, 3) == []


# -- 5. the vector index after a crash, and compaction ---------------------------------------


def test_bind_model_resumes_capabilities_that_a_crash_interrupted(store, raw, monkeypatch):
    name = f"resume_{uuid.uuid4().hex[:10]}"
    index = store.open_index(name, create=True)
    try:
        server_error_instead(
            monkeypatch,
            lambda: index._conn,
            lambda text: "capabilities_at =" in text,
            2013,
            "Lost connection",
            times=99,
        )
        with pytest.raises(StoreError):
            index.bind_model(MODEL, DIM)
        monkeypatch.undo()
        index.bind_model(MODEL, DIM)
        assert count(raw, f"SELECT capabilities_at IS NOT NULL FROM rag_{name}_meta") == 1
    finally:
        index.close()
        store.drop_index(name)


def test_an_hnsw_index_is_compacted_once_enough_chunks_are_written(
    tmp_path, raw, monkeypatch, caplog
):
    store = make_store(tmp_path, VectorPlan.ANN, tidb_compact_after_rows=4)
    name = f"compact_{uuid.uuid4().hex[:10]}"
    index = store.open_index(name, create=True)
    try:
        index.bind_model(MODEL, DIM)
        with raw.cursor() as cur:  # what bind_model records on a TiDB with TiFlash
            cur.execute(f"UPDATE rag_{name}_meta SET vector_index = 'hnsw'")
        sent: list[str] = []
        original = pymysql.cursors.Cursor.execute

        def execute(cursor: Any, query: Any, args: Any = None) -> Any:
            sent.append(text_of(query))
            return original(cursor, query, args)

        monkeypatch.setattr(pymysql.cursors.Cursor, "execute", execute)
        chunks = fixture_chunks()
        index.apply(batch_of(chunks[:2]))
        compactions_early = [s for s in sent if "COMPACT TIFLASH REPLICA" in s]
        index.apply(batch_of(chunks))
        compactions = [s for s in sent if "COMPACT TIFLASH REPLICA" in s]
        assert compactions_early == [] and len(compactions) == 1
        # MariaDB has no TiFlash: the statement fails, the load stands.
        assert "TiFlash compaction" in caplog.text and index.stats()["chunks"] == 5
    finally:
        monkeypatch.undo()
        index.close()
        store.drop_index(name)


# -- 6. connections dropped while idle --------------------------------------------------------


def test_an_idle_connection_is_replaced_before_the_server_drops_it(tmp_path, caplog):
    """TiDB Cloud Starter drops connections idle for 340 s; here the server's wait_timeout
    is 1 s and the store recycles after 0.5 s idle, so no statement meets a dead connection."""
    store = make_store(tmp_path, VectorPlan.EXACT, tidb_max_idle_s=0.5)
    name = f"idle_{uuid.uuid4().hex[:10]}"
    index = store.open_index(name, create=True)
    try:
        index.bind_model(MODEL, DIM)
        index.apply(batch_of(fixture_chunks()))
        with index._conn.cursor() as cur:
            cur.execute("SET SESSION wait_timeout = 1")
        time.sleep(2.0)
        with caplog.at_level(logging.WARNING):
            hits = index.bm25_search("NavigationStack", ALL, 3)
        assert ids(hits)[0] == "nav-1"
        assert "transient error" not in caplog.text
    finally:
        index.close()
        store.drop_index(name)
