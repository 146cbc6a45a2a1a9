"""`python -m query status`: what each index of a store holds, as text and as JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.store.sqlite.store import SQLiteStore
from query.cli.main import main
from tests.support.store_contract import DIM, MODEL, batch_of, fixture_chunks


@pytest.fixture
def store_dir(tmp_path: Path) -> Path:
    store = SQLiteStore(tmp_path / "indexes")
    for name, chunks in (("docs", fixture_chunks()), ("empty", [])):
        index = store.open_index(name, create=True)
        index.bind_model(MODEL, DIM)
        if chunks:
            index.apply(batch_of(chunks))
        index.close()
    return tmp_path / "indexes"


def test_json_lists_every_index_with_its_counts_and_model(store_dir, capsys):
    assert main(["status", "--store", str(store_dir), "--json"]) == 0
    status = json.loads(capsys.readouterr().out)
    chunks = len(fixture_chunks())
    assert sorted(status["indexes"]) == ["docs", "empty"]
    docs = status["indexes"]["docs"]
    assert (docs["chunks"], docs["vectors"], docs["model_id"], docs["dim"]) == (
        chunks,
        chunks,
        MODEL,
        DIM,
    )
    assert status["indexes"]["empty"]["chunks"] == 0


def test_json_names_the_paths_a_one_shot_query_takes(store_dir, capsys):
    assert main(["status", "--store", str(store_dir), "--json"]) == 0
    docs = json.loads(capsys.readouterr().out)["indexes"]["docs"]
    assert (docs["keyword_path"], docs["vector_path"]) == ("fts5", "exact")


def test_a_one_shot_query_names_the_path_it_took_in_its_notes(store_dir, capsys):
    argv = ["NavigationStack", "--store", str(store_dir), "--mode", "bm25", "--json"]
    assert main([*argv, "--no-expand", "--no-rerank"]) == 0
    notes = json.loads(capsys.readouterr().out)["notes"]
    assert [n for n in notes if "path" in n] == ["keyword path: fts5"]


def test_text_names_each_index_and_its_model(store_dir, capsys):
    assert main(["status", "--store", str(store_dir)]) == 0
    out = capsys.readouterr().out
    assert "2 index(es)" in out
    assert "\ndocs\n" in out and "\nempty\n" in out
    assert f"model_id: {MODEL}" in out


def test_missing_store_directory_is_a_usage_error(tmp_path, capsys):
    assert main(["status", "--store", str(tmp_path / "nowhere")]) == 2
    assert "no store directory" in capsys.readouterr().err


def test_a_store_url_that_is_not_tidb_is_a_usage_error_naming_it(capsys):
    assert main(["status", "--store", "http://example.com/rag"]) == 2
    assert "store 'http://example.com/rag': not a store URL" in capsys.readouterr().err


def test_a_question_spelled_status_is_asked_after_a_double_dash(store_dir, capsys):
    # Only the bare word is the subcommand; `--` makes it a question (which finds nothing).
    code = main(["--store", str(store_dir), "--no-expand", "--mode", "bm25", "--", "status"])
    assert code in (0, 1)
    assert "index(es)" not in capsys.readouterr().out
