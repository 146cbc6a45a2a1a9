"""End to end on the TiDB store (MariaDB standing in): the unchanged ingest flow loads part of
data/sample with the real embedding model, and `python -m query --store tidb://...` answers
from it. Slow (loads MiniLM), and needs RAG_TEST_MYSQL_DSN."""

from __future__ import annotations

import json
import uuid

import pytest

from core.settings import Settings
from core.store.open import open_store
from flows.ingest_flow import run_ingest
from loaders.target import IngestTarget
from query.cli.main import main
from tests.core.test_tidb_store import DSN_VAR, mariadb_dsn
from tests.core.test_tidb_store import pytestmark as mariadb_marks
from tests.support.paths import ROOT

pytestmark = [*mariadb_marks, pytest.mark.slow]

SAMPLE = ROOT / "data" / "sample"
INPUTS = [str(SAMPLE / "apple_docs.jsonl"), str(SAMPLE / "guides")]


@pytest.fixture(scope="module")
def ingested(tmp_path_factory):
    base = tmp_path_factory.mktemp("tidb-e2e")
    settings = Settings(
        data_dir=base / "data", index_dir=base / "cache", staging_dir=base / "staging"
    )
    name = f"e2e_{uuid.uuid4().hex[:8]}"
    first = run_ingest(INPUTS, settings, IngestTarget(index=name, store=mariadb_dsn()))
    again = run_ingest(INPUTS, settings, IngestTarget(index=name, store=mariadb_dsn()))
    yield settings, name, first, again
    open_store(mariadb_dsn(), settings).drop_index(name)


def test_the_ingest_flow_loads_the_sample_into_the_tidb_store(ingested):
    settings, name, first, _ = ingested
    assert not first.rejects and first.docs_new > 50 and first.chunks_written > 50
    index = open_store(mariadb_dsn(), settings).open_index(name)
    try:
        stats = index.stats()
    finally:
        index.close()
    assert stats["chunks"] == stats["vectors"] == stats["fts_rows"] == first.chunks_written
    assert stats["dim"] == 384


def test_a_second_run_over_unchanged_files_writes_nothing(ingested):
    _, _, first, again = ingested
    assert (again.docs_unchanged, again.chunks_written) == (first.docs_seen, 0)


def test_python_m_query_answers_from_the_tidb_store(ingested, monkeypatch, capsys):
    settings, name, _, _ = ingested
    for var, value in (
        ("RAG_INDEX_DIR", settings.index_dir),
        ("RAG_STAGING_DIR", settings.staging_dir),
        ("RAG_DATA_DIR", settings.data_dir),
    ):
        monkeypatch.setenv(var, str(value))
    argv = ["push views on a NavigationStack", "--store", mariadb_dsn(), "--index", name]
    code = main([*argv, "--json", "--no-rerank", "--no-expand", "--top-k", "5", "--strict"])
    out = capsys.readouterr()
    assert out.out, out.err
    result = json.loads(out.out)
    assert code == 0, result["notes"]
    titles = [c["title"] for c in result["chunks"]]
    assert "NavigationStack" in titles[:3]
    first = result["chunks"][0]
    assert first["index"] == name and first["ranks"]["vector"] and first["ranks"]["bm25"]


def test_the_dsn_variable_is_what_the_ci_script_exports():
    script = (ROOT / ".ci" / "mariadb.sh").read_text()
    assert f"export {DSN_VAR}=" in script
