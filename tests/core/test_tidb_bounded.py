"""The keyword leg's bounded reads on the TiDB store (issue 30, item 6), MariaDB standing in:
each query term reads at most `tidb_bm25_postings_per_term` postings, highest impact first,
scored with the document frequency kept in term_df; below the bound the answer is exact BM25,
and term_df stays equal to the postings through replacements, deletions, concurrent loaders
and the in-place upgrade of an index loaded before migration 0005."""

from __future__ import annotations

import json
import threading
import uuid
from collections import Counter
from collections.abc import Iterator

import pymysql
import pytest

from core.settings import Settings
from core.store.analyzer import analyze, analyze_query
from core.store.tidb.conn import connect
from core.store.tidb.dsn import endpoint_from
from core.store.tidb.search import VectorPlan
from core.store.tidb.sql import DIALECT_DIR, Tables, fragment
from core.store.tidb.store import TiDBIndex, TiDBStore
from sql import migrations
from tests.core.test_tidb_search import CORPUS, QUERIES, reference_bm25
from tests.core.test_tidb_store import make_store, mariadb_dsn, pytestmark  # noqa: F401 - same skip and marker
from tests.support.store_contract import ALL, DIM, MODEL, batch_of, make_chunk


def impact(tf: int, doc_len: int) -> float:
    """Migration 0005's stored ordering: BM25's term-frequency part at avgdl 256."""
    return tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * doc_len / 256))


@pytest.fixture
def raw() -> Iterator[pymysql.Connection]:
    conn = connect(endpoint_from(mariadb_dsn(), Settings()))
    conn.autocommit(True)
    yield conn
    conn.close()


def open_new(store: TiDBStore) -> TiDBIndex:
    index = store.open_index(f"bound_{uuid.uuid4().hex[:10]}", create=True)
    index.bind_model(MODEL, DIM)
    return index


@pytest.fixture
def made(tmp_path) -> Iterator[list[tuple[TiDBStore, TiDBIndex]]]:
    """Indexes the test opens (`open_in(settings)`), dropped afterwards."""
    opened: list[tuple[TiDBStore, TiDBIndex]] = []
    yield opened
    for store, index in opened:
        index.close()
        store.drop_index(index.name)


def open_in(made, tmp_path, **settings) -> TiDBIndex:
    store = make_store(tmp_path, VectorPlan.EXACT, **settings)
    index = open_new(store)
    made.append((store, index))
    return index


def corpus() -> tuple[list, dict[str, str]]:
    records = [json.loads(line) for line in CORPUS.read_text().splitlines() if line.strip()]
    chunks = [make_chunk(r["chunk_id"], r["doc_id"], **r["fields"]) for r in records]
    texts = {c.chunk_id: " ".join(p for p in (c.context, c.content) if p) for c in chunks}
    return chunks, texts


def df_drift(raw: pymysql.Connection, index: TiDBIndex) -> list[tuple]:
    """Terms whose term_df sum differs from their count of postings (none, when correct)."""
    names = index.tables.names()
    with raw.cursor() as cur:
        cur.execute(
            f"SELECT p.term, p.n, d.n FROM (SELECT term, COUNT(*) AS n FROM {names['postings']} "
            f"GROUP BY term) AS p LEFT JOIN (SELECT term, SUM(df) AS n FROM {names['term_df']} "
            "GROUP BY term) AS d ON d.term = p.term WHERE d.n IS NULL OR d.n <> p.n "
            f"UNION ALL SELECT term, 0, SUM(df) FROM {names['term_df']} WHERE term NOT IN "
            f"(SELECT term FROM {names['postings']}) GROUP BY term HAVING SUM(df) <> 0"
        )
        return list(cur.fetchall())


# -- the bound ------------------------------------------------------------------------------


def test_a_term_past_the_bound_is_read_highest_impact_first_and_scored_with_its_full_df(
    made, tmp_path
):
    index = open_in(made, tmp_path, tidb_bm25_postings_per_term=2)
    # "alpha" in six chunks with different tf and lengths; "filler" pads the lengths.
    shapes = [(1, 3), (3, 5), (2, 40), (4, 4), (1, 60), (2, 2)]
    chunks = [
        make_chunk(f"a{i}", f"doc{i}", content=" ".join(["alpha"] * tf + ["filler"] * pad))
        for i, (tf, pad) in enumerate(shapes)
    ]
    index.apply(batch_of(chunks))
    texts = {c.chunk_id: c.content for c in chunks}
    lengths = {cid: len(analyze(t)) for cid, t in texts.items()}
    by_impact = sorted(
        texts, key=lambda cid: (impact(Counter(analyze(texts[cid]))["alpha"], lengths[cid]), cid)
    )
    expected = reference_bm25(texts, "alpha")  # idf from all six chunks
    hits = index.bm25_search("alpha", ALL, 10)
    assert {h.chunk_id for h in hits} == set(by_impact[-2:])
    for hit in hits:
        assert hit.score == pytest.approx(expected[hit.chunk_id], abs=1e-9)


def largest_df(texts: dict[str, str], query: str) -> int:
    tokens = [set(analyze(t)) for t in texts.values()]
    return max(sum(term in t for t in tokens) for term in analyze_query(query))


@pytest.mark.parametrize("query", QUERIES)
def test_below_the_bound_the_answer_is_exact_bm25_and_at_it_the_bound_bites(made, tmp_path, query):
    chunks, texts = corpus()
    bound = largest_df(texts, query)
    exact = open_in(made, tmp_path, tidb_bm25_postings_per_term=bound)
    exact.apply(batch_of(chunks))
    expected = reference_bm25(texts, query)
    hits = exact.bm25_search(query, ALL, 100)
    assert {h.chunk_id for h in hits} == set(expected)
    for hit in hits:
        assert hit.score == pytest.approx(expected[hit.chunk_id], abs=1e-9)
    if bound > 1:
        tighter = open_in(made, tmp_path, tidb_bm25_postings_per_term=bound - 1)
        tighter.apply(batch_of(chunks))
        assert len(tighter.bm25_search(query, ALL, 100)) < len(hits) or any(
            h.score < expected[h.chunk_id] - 1e-9 for h in tighter.bm25_search(query, ALL, 100)
        )


def test_each_term_is_one_backward_range_read_of_the_impact_index(made, tmp_path, raw):
    index = open_in(made, tmp_path)
    chunks = [make_chunk(f"c{i:03d}", f"d{i:03d}", content=f"common w{i}") for i in range(300)]
    index.apply(batch_of(chunks))
    read = fragment("bm25_term_postings", Tables(index.name), term="%(t)s")
    with raw.cursor(pymysql.cursors.DictCursor) as cur:
        cur.execute("EXPLAIN " + read, {"t": "common", "per_term": 20})
        plan = {row["table"]: row for row in cur.fetchall()}
        scan = plan[index.tables.names()["postings"]]
        assert scan["key"] == "term_impact_idx" and scan["type"] == "ref"
        assert "Using index" in scan["Extra"] and "filesort" not in scan["Extra"]
        # Index entries the engine handed up for one term in 300 chunks, bounded at 20.
        before = handler_reads(cur)
        cur.execute(read, {"t": "common", "per_term": 20})
        assert len(cur.fetchall()) == 20
        assert handler_reads(cur) - before <= 21


def handler_reads(cur) -> int:
    """The session's index reads so far (a key lookup, then one step per entry)."""
    cur.execute("SHOW SESSION STATUS LIKE 'Handler_read%%'")
    reads = {row["Variable_name"]: int(row["Value"]) for row in cur.fetchall()}
    return reads["Handler_read_key"] + reads["Handler_read_prev"] + reads["Handler_read_next"]


# -- term_df follows the postings -------------------------------------------------------------


def test_term_df_equals_the_postings_through_replacements_and_deletions(made, tmp_path, raw):
    index = open_in(made, tmp_path)
    chunks, texts = corpus()
    index.apply(batch_of(chunks))
    assert not df_drift(raw, index)
    changed = [
        make_chunk(c.chunk_id, c.doc_id, content="entirely different words view")
        for c in chunks
        if c.doc_id == chunks[0].doc_id
    ]
    index.apply(batch_of(changed, doc_hash="v2"))
    index.apply(batch_of([], delete=(chunks[-1].doc_id,)))
    assert not df_drift(raw, index)
    remaining = {
        **{cid: t for cid, t in texts.items() if cid not in {c.chunk_id for c in changed}},
        **{c.chunk_id: c.content for c in changed},
    }
    remaining = {
        cid: t
        for cid, t in remaining.items()
        if cid not in {c.chunk_id for c in chunks if c.doc_id == chunks[-1].doc_id}
    }
    expected = reference_bm25(remaining, "view model")
    for hit in index.bm25_search("view model", ALL, 100):
        assert hit.score == pytest.approx(expected[hit.chunk_id], abs=1e-9)


def test_concurrent_loaders_keep_term_df_exact(made, tmp_path, raw):
    index = open_in(made, tmp_path)
    store = made[0][0]
    errors: list[BaseException] = []

    def load(worker: int) -> None:
        handle = store.open_index(index.name)
        try:
            for round_ in range(4):
                chunks = [
                    make_chunk(f"w{worker}r{round_}c{i}", f"w{worker}d{i}", content="shared words")
                    for i in range(5)
                ]
                handle.apply(batch_of(chunks, doc_hash=f"v{round_}"))
        except BaseException as exc:  # reported below, in the test's thread
            errors.append(exc)
        finally:
            handle.close()

    threads = [threading.Thread(target=load, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert not df_drift(raw, index)
    with raw.cursor() as cur:
        cur.execute(f"SELECT SUM(df) FROM {index.tables.names()['term_df']} WHERE term = 'shared'")
        assert int(cur.fetchone()[0]) == 20  # 4 workers x 5 documents, the last round's


# -- the upgrade of an index loaded before migration 0005 ---------------------------------------


def undo_migration_5(raw: pymysql.Connection, index: TiDBIndex) -> None:
    names = index.tables.names()
    with raw.cursor() as cur:
        cur.execute(f"DROP TABLE {names['term_df']}")
        cur.execute(f"ALTER TABLE {names['postings']} DROP INDEX term_impact_idx")
        cur.execute(f"ALTER TABLE {names['postings']} DROP COLUMN impact")
        cur.execute(f"DELETE FROM {names['migrations']} WHERE version = 5")


def test_an_index_loaded_before_migration_5_is_upgraded_in_place(made, tmp_path, raw):
    index = open_in(made, tmp_path)
    store = made[0][0]
    chunks, texts = corpus()
    index.apply(batch_of(chunks))
    undo_migration_5(raw, index)
    for _ in range(2):  # and once more, as after a crash before the migration was recorded
        with raw.cursor() as cur:
            cur.execute(f"DELETE FROM {index.tables.names()['migrations']} WHERE version = 5")
        reopened = store.open_index(index.name, write=True)
        # Every migration applied again, 5 among them: the latest is the schema version.
        assert reopened.schema_version == migrations(DIALECT_DIR)[-1].version >= 5
        assert not df_drift(raw, reopened)
        expected = reference_bm25(texts, "url session data task")
        hits = reopened.bm25_search("url session data task", ALL, 100)
        assert {h.chunk_id for h in hits} == set(expected)
        for hit in hits:
            assert hit.score == pytest.approx(expected[hit.chunk_id], abs=1e-9)
        reopened.close()
