"""The TiDB store's server-free parts: rendered DDL against TiDB's documented syntax, SQL
rendering rules, connection settings, the vector over-fetch plan, fusion, row preparation
and retries. No server needed."""

from __future__ import annotations

import re
import ssl

import numpy as np
import pymysql
import pytest

from core.settings import Settings
from core.store.contract import StoreError
from core.store.filters import SearchFilter
from core.store.text_key import text_key
from core.store.tidb.conn import is_transient, tls_context, with_retries
from core.store.tidb.dsn import endpoint_from
from core.store.tidb.index_search import filter_sql
from core.store.tidb.load import MAX_TXN_BYTES, document_groups, prepare, vector_texts
from core.store.tidb.schema import index_ddl, vector_type
from core.store.tidb.search import MAX_FETCH, fetch_sizes
from core.store.tidb.sql import (
    Server,
    Tables,
    detect_server,
    placeholders,
    render,
    statements,
)
from loaders.arrow_tables import chunks_to_table
from sql import statement_names
from tests.support.paths import FIXTURES
from tests.support.store_contract import make_chunk

GOLDEN = FIXTURES / "tidb"


def ddl(server: Server, dim: int = 384) -> list[str]:
    return index_ddl(Tables("docs"), server, dim)


def one(statements_: list[str], pattern: str) -> str:
    found = [s for s in statements_ if re.search(pattern, s)]
    assert len(found) == 1, (pattern, found)
    return found[0]


# -- rendered DDL against the documented TiDB syntax ---------------------------------------


def test_tidb_vector_index_uses_the_documented_hnsw_form():
    statement = one(ddl(Server.TIDB), r"VECTOR INDEX")
    # ALTER TABLE t ADD VECTOR INDEX idx ((VEC_COSINE_DISTANCE(col))) USING HNSW: double
    # parentheses around the distance expression, cosine, HNSW.
    assert re.fullmatch(
        r"ALTER TABLE rag_docs_chunks ADD VECTOR INDEX \w+ "
        r"\(\(VEC_COSINE_DISTANCE\(embedding\)\)\) USING HNSW",
        statement,
    )


def test_tidb_sets_a_tiflash_replica_before_adding_the_vector_index():
    statements_ = ddl(Server.TIDB)
    replica = one(statements_, r"TIFLASH")
    assert replica == "ALTER TABLE rag_docs_chunks SET TIFLASH REPLICA 1"
    assert statements_.index(replica) < statements_.index(one(statements_, r"VECTOR INDEX"))


def test_tidb_embedding_is_a_fixed_dimension_vector_column():
    column = one(ddl(Server.TIDB, 768), r"ADD COLUMN IF NOT EXISTS embedding")
    assert column == "ALTER TABLE rag_docs_chunks ADD COLUMN IF NOT EXISTS embedding VECTOR(768)"


def test_tidb_framework_tags_get_a_multi_valued_index_with_a_sized_char_array():
    statement = one(ddl(Server.TIDB), r"ARRAY")
    # CAST(json AS CHAR(n) ARRAY) inside an expression index: CHAR needs its length.
    assert re.fullmatch(
        r"CREATE INDEX IF NOT EXISTS \w+ ON rag_docs_chunks "
        r"\(\(CAST\(framework_tags AS CHAR\(\d+\) ARRAY\)\)\)",
        statement,
    )


def test_mariadb_rendering_has_text_vectors_and_no_tidb_only_ddl():
    statements_ = ddl(Server.MARIADB)
    text = "\n".join(statements_)
    assert one(statements_, r"ADD COLUMN IF NOT EXISTS embedding").endswith("embedding LONGTEXT")
    for tidb_only in ("VECTOR INDEX", "TIFLASH", "ARRAY", "VECTOR("):
        assert tidb_only not in text


def test_rendered_ddl_matches_the_reviewed_golden_files():
    for server in Server:
        golden = (GOLDEN / f"ddl_{server.value}.sql").read_text()
        assert ";\n\n".join(ddl(server)) + ";\n" == golden, server


def test_chunk_key_is_the_chunk_id_not_auto_random():
    chunks = one(ddl(Server.TIDB), r"CREATE TABLE IF NOT EXISTS rag_docs_chunks")
    assert "PRIMARY KEY (chunk_id)" in chunks
    assert "AUTO_RANDOM" not in chunks and "AUTO_INCREMENT" not in chunks


@pytest.mark.parametrize("dim", [0, -1, 16384])
def test_vector_dimension_outside_tidbs_range_is_refused(dim):
    with pytest.raises(StoreError, match="16383"):
        vector_type(Server.TIDB, dim)


# -- rendering rules -------------------------------------------------------------------------


def test_every_statement_file_renders_with_known_placeholders():
    parts = {
        "doc_ids": "%(d0)s",
        "chunk_ids": "%(c0)s",
        "table_names": "%(t0)s",
        "terms": "%(t0)s",
        "term": "%(t0)s",
        "term_postings": "SELECT 1",
        "names": "%(n0)s",
        "shard_ids": "%(s0)s",
        "scopes": "(%(d0)s, %(s0)s)",
        "filter": "1",
        "vector_type": "LONGTEXT",
        "vector_candidates": "SELECT 1",
        "bm25_candidates": "SELECT 1",
    }
    for name in statement_names("tidb"):
        assert "{" not in render(name, Tables("docs"), **parts), name


def test_an_unknown_placeholder_is_an_error_not_passed_through():
    with pytest.raises(KeyError, match="filter"):
        render("vector_exact_candidates", Tables("docs"))


def test_in_lists_are_placeholders_and_values_stay_bound():
    marks, names = placeholders("t", 3)
    assert marks == "%(t0)s, %(t1)s, %(t2)s"
    assert names == {"t0": 0, "t1": 1, "t2": 2}


def test_statement_splitter_drops_comments_and_keeps_statements():
    script = "-- head\nSELECT 1;\n-- between\nSELECT\n  2;\n"
    assert statements(script) == ["SELECT 1", "SELECT\n  2"]


@pytest.mark.parametrize(
    ("version", "server"),
    [("8.0.11-TiDB-v8.5.1", Server.TIDB), ("10.11.18-MariaDB-0+deb12u1", Server.MARIADB)],
)
def test_server_is_recognised_from_its_version_string(version, server):
    assert detect_server(version) is server


def test_other_servers_are_refused_by_name():
    with pytest.raises(StoreError, match="8.0.36"):
        detect_server("8.0.36")


# -- connection settings ---------------------------------------------------------------------


def test_url_parts_override_settings_and_the_rest_comes_from_settings():
    settings = Settings(tidb_host="settings-host", tidb_user="u", tidb_ssl_ca="/ca.pem")
    endpoint = endpoint_from("tidb://alice:p%40ss@db.example:4001/rag2", settings)
    assert (endpoint.host, endpoint.port, endpoint.user, endpoint.password) == (
        "db.example",
        4001,
        "alice",
        "p@ss",
    )
    assert endpoint.database == "rag2" and endpoint.ssl_ca == "/ca.pem" and endpoint.tls


def test_bare_tidb_url_means_the_settings():
    settings = Settings(tidb_host="h", tidb_port=4000, tidb_database="rag")
    endpoint = endpoint_from("tidb://", settings)
    assert (endpoint.host, endpoint.port, endpoint.database, endpoint.tls) == (
        "h",
        4000,
        "rag",
        False,
    )


def test_tls_options_in_the_url():
    endpoint = endpoint_from("tidb://h/db?ssl_ca=/etc/ca.pem&ssl_verify=false", Settings())
    assert endpoint.tls and endpoint.ssl_ca == "/etc/ca.pem" and endpoint.ssl_verify is False
    assert endpoint_from("tidb://h/db?ssl=true", Settings()).tls


def test_unknown_url_options_are_refused_with_the_valid_ones():
    with pytest.raises(StoreError, match="ssl_ca"):
        endpoint_from("tidb://h/db?sslmode=require", Settings())


def test_the_store_location_never_shows_the_password():
    endpoint = endpoint_from("tidb://u:secret@h:4000/db", Settings())
    assert "secret" not in endpoint.describe()


def test_tls_verifies_the_certificate_and_host_name_by_default():
    context = tls_context(endpoint_from("tidb://gateway.example/db?ssl=true", Settings()))
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname


def test_tls_verification_can_be_switched_off():
    endpoint = endpoint_from("tidb://h/db?ssl=true&ssl_verify=false", Settings())
    assert tls_context(endpoint).verify_mode == ssl.CERT_NONE


def test_an_unreadable_ca_file_is_named_in_the_error(tmp_path):
    missing = tmp_path / "no-such-ca.pem"
    with pytest.raises(StoreError, match="no-such-ca.pem"):
        tls_context(endpoint_from(f"tidb://h/db?ssl_ca={missing}", Settings()))


# -- vector over-fetch plan ------------------------------------------------------------------


def test_over_fetch_starts_at_ten_times_k_and_widens_fourfold():
    assert fetch_sizes(5, 1_000_000) == [100, 400, 1600, 6400]
    assert fetch_sizes(50, 1_000_000) == [500, 2000, 8000]


def test_over_fetch_that_reaches_every_row_is_the_last_try():
    assert fetch_sizes(5, 250) == [100, 250]


def test_over_fetch_never_exceeds_the_exact_scan_threshold():
    assert max(fetch_sizes(1000, 10**9)) <= MAX_FETCH


# -- fusion ----------------------------------------------------------------------------------


# -- rows ------------------------------------------------------------------------------------


def test_vector_text_round_trips_float32_exactly():
    vectors = np.random.default_rng(3).normal(size=(4, 384)).astype(np.float32)
    texts = vector_texts(vectors)
    back = np.array([[float(x) for x in t[1:-1].split(",")] for t in texts], dtype=np.float32)
    assert np.array_equal(back, vectors)
    assert all(t.startswith("[") and t.endswith("]") and " " not in t for t in texts)


def test_non_finite_vectors_are_refused():
    with pytest.raises(StoreError, match="NaN"):
        vector_texts(np.array([[np.nan, 1.0]], dtype=np.float32))


def test_prepared_chunk_rows_carry_the_text_key_of_their_content():
    chunks = [make_chunk("a", "d", content="Same  TEXT"), make_chunk("b", "d", content="same text")]
    rows = prepare(chunks_to_table(chunks), np.ones((2, 4), dtype=np.float32), [], with_body=False)
    assert rows.chunks.column("text_key").to_pylist() == [text_key("same text")] * 2


def test_documents_are_grouped_whole_under_the_transaction_budget():
    big = MAX_TXN_BYTES // 4  # two chunk rows of this size fill a group (postings double it)
    groups = document_groups(["a", "b", "c"], ["a", "b", "b", "c"], [big, big, 10, big])
    assert groups == [["a"], ["b"], ["c"]]
    assert document_groups(["a", "b"], ["a", "b"], [10, 10]) == [["a", "b"]]


# -- retries ---------------------------------------------------------------------------------


def test_transient_errors_are_retried_with_growing_backoff():
    failures = [pymysql.err.OperationalError(9007, "write conflict")] * 3
    delays, repaired = [], []

    def work():
        if failures:
            raise failures.pop()
        return "done"

    result = with_retries(work, on_retry=repaired.append, sleep=delays.append, base_delay=1.0)
    assert result == "done" and len(repaired) == 3
    assert all(0 <= d <= cap for d, cap in zip(delays, [1.0, 2.0, 4.0], strict=True))


def test_retries_give_up_after_the_last_attempt():
    def work():
        raise pymysql.err.OperationalError(2013, "Lost connection")

    with pytest.raises(pymysql.err.OperationalError):
        with_retries(work, on_retry=lambda exc: None, sleep=lambda s: None, attempts=3)


def test_other_errors_are_raised_at_once():
    calls = []

    def work():
        calls.append(1)
        raise pymysql.err.IntegrityError(1062, "Duplicate entry")

    with pytest.raises(pymysql.err.IntegrityError):
        with_retries(work, on_retry=lambda exc: None, sleep=lambda s: None)
    assert calls == [1]


# -- the HNSW query shape ----------------------------------------------------------------------


def test_the_ann_query_asks_for_tiflash_where_the_hnsw_index_lives():
    sql = render("vector_ann_candidates", Tables("docs"), filter="1")
    inner = sql[sql.index("FROM (") : sql.index(") AS c")]
    # In the inner query block, over the table as named there: TiDB resolves hints per block.
    assert "SELECT /*+ READ_FROM_STORAGE(TIFLASH[rag_docs_chunks]) */" in inner
    assert "FROM rag_docs_chunks\n" in inner


def test_the_exact_scan_needs_no_tiflash_hint():
    assert "READ_FROM_STORAGE" not in render("vector_exact_candidates", Tables("docs"), filter="1")


@pytest.mark.parametrize(
    ("code", "message", "transient"),
    [
        (8028, "Information schema is changed during the execution", True),
        (1105, "Information schema is changed. [try again later]", True),
        (1105, "runtime error: index out of range", False),
        (1062, "Duplicate entry", False),
    ],
)
def test_which_errors_are_transient(code, message, transient):
    assert is_transient(pymysql.err.OperationalError(code, message)) is transient


# -- the frameworks filter and TiDB's multi-valued index ---------------------------------------


def test_without_a_frameworks_filter_the_predicate_has_no_frameworks_rule():
    predicate = filter_sql(Tables("docs"), SearchFilter())
    assert "JSON_OVERLAPS" not in predicate and "frameworks" not in predicate


def test_a_frameworks_filter_is_a_plain_conjunct_the_multi_valued_index_can_serve():
    predicate = filter_sql(Tables("docs"), SearchFilter(frameworks_any=("SwiftUI",)))
    rule = "JSON_OVERLAPS(c.framework_tags, %(frameworks)s)"
    assert predicate.count("JSON_OVERLAPS") == 1
    # At the top level of the WHERE: `AND rule`, after every parenthesised rule has closed,
    # and not beside an `IS NULL OR` that would make TiDB skip the index.
    assert predicate.rstrip().endswith("AND " + rule)
    before = predicate[: predicate.index(rule)]
    assert before.count("(") == before.count(")")
    assert "%(frameworks)s IS NULL" not in predicate


def test_every_search_statement_renders_the_frameworks_rule_only_when_asked():
    for name in ("vector_ann_candidates", "vector_exact_candidates", "bm25_native_candidates"):
        for filt, present in ((SearchFilter(), False), (SearchFilter(frameworks_any=()), True)):
            sql = render(name, Tables("docs"), filter=filter_sql(Tables("docs"), filt))
            assert ("JSON_OVERLAPS" in sql) is present, (name, filt)


# -- the keyword leg's bounded reads ----------------------------------------------------------


def test_each_query_term_reads_a_bounded_prefix_of_its_postings_in_impact_order():
    read = render("bm25_term_postings", Tables("docs"), term="%(t0)s")
    assert "WHERE term = %(t0)s" in read
    assert "ORDER BY impact DESC, chunk_id DESC" in read
    assert "LIMIT %(per_term)s" in read


def test_the_postings_get_an_impact_index_covering_the_scoring_columns():
    statement = one(ddl(Server.TIDB), r"term_impact_idx")
    assert statement == (
        "CREATE INDEX IF NOT EXISTS term_impact_idx ON rag_docs_postings "
        "(term, impact, chunk_id, tf, doc_len)"
    )
