"""`ingest --vectors later` and `rag-retrieve embed` through the real Prefect flows: a corpus
keyword-searchable with its chunks pending, then embedded by the second command, which is
safe to run again and refuses an index that does not exist."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from prefect.testing.utilities import prefect_test_harness

from core.ingest_lines import BREAKDOWN_KEYS
from core.store.filters import SearchFilter
from core.store.sqlite.store import SQLiteStore
from flows.embed import main as embed_main
from flows.ingest import main as ingest_main
from loaders.summary import SUMMARY_KEYS
from rag_retrieve.cli import main as rag_retrieve
from tests.support.ingest import INDEX, copy_corpus


@pytest.fixture(scope="module")
def prefect_api():
    with prefect_test_harness(server_startup_timeout=120):
        yield


@pytest.fixture
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for var, sub in (("DATA", "data"), ("INDEX", "indexes"), ("STAGING", "staging")):
        monkeypatch.setenv(f"RAG_{var}_DIR", str(tmp_path / sub))
    return tmp_path


def last_json(capsys: pytest.CaptureFixture[str]) -> dict:
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def test_vectors_later_leaves_every_chunk_keyword_searchable_and_pending(
    prefect_api, isolated, capsys
):
    corpus, store = copy_corpus(isolated), isolated / "store"
    argv = [str(corpus), "--store", str(store), "--index", INDEX, "--vectors", "later"]
    assert ingest_main([*argv, "--json"]) == 0
    summary = last_json(capsys)
    assert summary["chunks_written"] == summary["chunks_pending"] > 0
    assert (summary["chunks_embedded"], summary["vector_coverage"]) == (0, 0.0)
    with SQLiteStore(store).open_index(INDEX) as index:
        assert index.stats()["vectors"] == 0
        assert index.bm25_search("lighthouse", SearchFilter(), 5)


def test_the_readable_summary_says_what_waits_and_how_to_embed_it(prefect_api, isolated, capsys):
    corpus, store = copy_corpus(isolated), isolated / "store"
    argv = [str(corpus), "--store", str(store), "--index", INDEX, "--vectors", "later"]
    assert ingest_main(argv) == 0
    out = capsys.readouterr().out
    assert "vectors: 0% of the index's chunks" in out
    assert f"rag-retrieve embed --index {INDEX}" in out


def test_embed_fills_in_every_pending_vector_then_has_nothing_to_do(prefect_api, isolated, capsys):
    corpus, store = copy_corpus(isolated), isolated / "store"
    ingest_main([str(corpus), "--store", str(store), "--index", INDEX, "--vectors", "later"])
    capsys.readouterr()
    with SQLiteStore(store).open_index(INDEX) as index:
        chunks = index.stats()["chunks"]

    assert rag_retrieve(["embed", "--store", str(store), "--index", INDEX, "--json"]) == 0
    first = last_json(capsys)
    assert embed_main(["--store", str(store), "--index", INDEX, "--json"]) == 0
    again = last_json(capsys)

    assert list(first) == ["kind", *SUMMARY_KEYS, *BREAKDOWN_KEYS, "stages"]
    assert first["chunks_embedded"] == chunks
    assert (first["chunks_pending"], first["vector_coverage"]) == (0, 1.0)
    assert first["chunks_written"] == first["docs_new"] == 0  # nothing chunked or loaded
    assert (again["chunks_embedded"], again["embedding_cache_hits"]) == (0, 0)
    with SQLiteStore(store).open_index(INDEX) as index:
        assert index.stats()["vectors"] == chunks


def test_embed_of_an_index_that_does_not_exist_exits_2_naming_the_indexes(
    prefect_api, isolated, capsys
):
    corpus, store = copy_corpus(isolated), isolated / "store"
    ingest_main([str(corpus), "--store", str(store), "--index", INDEX, "--vectors", "later"])
    capsys.readouterr()
    assert embed_main(["--store", str(store), "--index", "nope"]) == 2
    err = capsys.readouterr().err
    assert "no index 'nope'" in err and INDEX in err


def test_executor_dask_without_the_dask_extra_exits_2_naming_it(isolated, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if not installed
    assert embed_main(["--store", str(isolated / "store"), "--executor", "dask"]) == 2
    assert "pip install 'rag-retrieve[dask]'" in capsys.readouterr().err


def test_dask_flags_without_the_dask_executor_exit_2(isolated, capsys):
    argv = ["--store", str(isolated / "store"), "--workers", "3", "--json"]
    assert embed_main(argv) == 2
    assert "--executor dask" in last_json(capsys)["message"]


def test_executor_endpoints_without_servers_exits_2_naming_the_flag(isolated, capsys):
    assert embed_main(["--store", str(isolated / "store"), "--executor", "endpoints"]) == 2
    assert "--endpoints URL[,URL...]" in capsys.readouterr().err


def test_endpoints_without_the_endpoints_executor_exit_2(isolated, capsys):
    argv = ["--store", str(isolated / "store"), "--endpoints", "http://127.0.0.1:9", "--json"]
    assert embed_main(argv) == 2
    assert "--executor endpoints" in last_json(capsys)["message"]
