"""`python -m query doctor`: each check OK, skipped or failed with its fix; exit 1 on a failure."""

from __future__ import annotations

import json
import socket
import sqlite3
from pathlib import Path

import pytest

from core.embedding import model_files
from core.embedding.model_files import model_dir
from core.embedding.models import canonical_model_id, model_spec
from core.embedding.onnx_graph import graph_path
from core.settings import Settings
from core.store.sqlite.store import SQLiteStore
from query.cli.doctor import FAILED, OK, SKIPPED, diagnose
from query.cli.main import main
from tests.support.store_contract import DIM, MODEL, batch_of, fixture_chunks


def build(root: Path, model_id: str) -> Path:
    store = SQLiteStore(root / "indexes")
    index = store.open_index("docs", create=True)
    index.bind_model(model_id, DIM)
    index.apply(batch_of(fixture_chunks()))
    index.close()
    return root / "indexes"


@pytest.fixture
def settings(monkeypatch) -> Settings:
    for name in ("OPENCLAW_LLM_ENDPOINT", "RERANKER_ENDPOINT", "EMBEDDING_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    # No worker: a port nothing listens on.
    monkeypatch.setenv("RAG_QUERY_WORKER_URL", f"http://127.0.0.1:{closed_port()}")
    return Settings.from_env()


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def by_name(checks) -> dict:
    return {c.name: c for c in checks}


def test_a_healthy_store_passes_and_what_is_not_configured_is_skipped(tmp_path, settings, capsys):
    store = build(tmp_path, canonical_model_id(settings.embedding_model))
    assert main(["doctor", "--store", str(store), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    states = {c["name"]: c["state"] for c in report["checks"]}
    assert report["ok"] is True
    assert states["query model"] == OK and states["index docs"] == OK
    assert states["worker / MCP server"] == SKIPPED and states["LLM endpoint"] == SKIPPED


def test_an_index_built_with_another_model_fails_and_says_how_to_fix_it(tmp_path, settings):
    store = build(tmp_path, MODEL)
    check = by_name(diagnose(settings, str(store)))["index docs"]
    assert check.state == FAILED
    assert MODEL in check.detail and "RAG_EMBEDDING_MODEL" in check.fix


def test_chunks_waiting_for_vectors_are_ok_with_the_command_that_embeds_them(
    tmp_path, settings, capsys
):
    root = tmp_path / "indexes"
    index = SQLiteStore(root).open_index("docs", create=True)
    index.bind_model(canonical_model_id(settings.embedding_model), DIM)
    chunks = fixture_chunks()
    index.apply(batch_of(chunks[:2]))
    index.apply(batch_of(chunks[2:], without_vectors=True))
    index.close()
    assert main(["doctor", "--store", str(root)]) == 0
    out = capsys.readouterr().out
    assert "OK   index docs: 5 chunks, 2 vectors" in out and "3 chunks wait" in out
    assert "     next: rag-retrieve embed --index docs" in out


def test_full_text_rows_that_do_not_match_the_chunks_fail_and_exit_is_1(tmp_path, settings, capsys):
    store = build(tmp_path, canonical_model_id(settings.embedding_model))
    with sqlite3.connect(store / "docs.sqlite") as conn:
        conn.execute("INSERT INTO chunks_fts (rowid, body) VALUES (9999, 'stray')")
        conn.execute("UPDATE meta SET generation = generation + 1")
    assert main(["doctor", "--store", str(store)]) == 1
    out = capsys.readouterr().out
    assert "FAIL index docs" in out and "6 full-text rows" in out and "--force" in out


def test_an_endpoint_that_refuses_connections_fails_one_that_listens_passes(tmp_path, monkeypatch):
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        monkeypatch.setenv("RERANKER_ENDPOINT", f"http://127.0.0.1:{listening.getsockname()[1]}")
        monkeypatch.setenv("OPENCLAW_LLM_ENDPOINT", f"http://127.0.0.1:{closed_port()}/v1")
        checks = by_name(diagnose(Settings.from_env(), str(build(tmp_path, MODEL))))
    assert checks["reranker endpoint"].state == OK
    assert checks["LLM endpoint"].state == FAILED
    assert "OPENCLAW_LLM_ENDPOINT" in checks["LLM endpoint"].fix


def test_a_store_that_is_not_a_directory_is_a_usage_error(tmp_path, capsys):
    assert main(["doctor", "--store", str(tmp_path / "nowhere")]) == 2
    assert "no store directory" in capsys.readouterr().err


def test_the_embedding_runtime_line_says_whether_the_onnx_graph_is_built(tmp_path, settings):
    cache = tmp_path / "models"
    fresh = by_name(diagnose(settings.with_(model_cache_dir=cache), str(tmp_path)))
    runtime = fresh["embedding runtime"]
    assert runtime.state == OK and runtime.detail.startswith("onnx: graph not built yet")
    assert str(cache / "onnx") in runtime.detail

    path = graph_path(model_dir(settings), model_spec(settings.embedding_model), cache / "onnx")
    path.parent.mkdir(parents=True)
    path.write_bytes(b"")
    built = by_name(diagnose(settings.with_(model_cache_dir=cache), str(tmp_path)))
    assert built["embedding runtime"].detail == f"onnx: built graph {path}"

    chosen = by_name(diagnose(settings.with_(embedding_runtime="torch"), str(tmp_path)))
    assert chosen["embedding runtime"].detail == "torch: RAG_EMBEDDING_RUNTIME=torch"


def test_the_embedding_precision_line_says_what_auto_picks_and_refuses_the_impossible(
    tmp_path, settings
):
    auto = by_name(diagnose(settings, str(tmp_path)))["embedding precision"]
    assert auto.state == OK and auto.detail.split(":")[0] in ("fp32", "int8", "bf16", "fp16")
    assert "auto" in auto.detail
    wrong = settings.with_(embedding_runtime="onnx", embedding_precision="fp16")
    refused = by_name(diagnose(wrong, str(tmp_path)))["embedding precision"]
    assert refused.state == FAILED and "fp16 runs on mlx" in refused.detail


def test_a_default_model_not_fetched_yet_is_skipped_with_the_command_that_fetches_it(
    tmp_path, settings, monkeypatch
):
    # As in an install without the [torch] extra, which brings the packaged wheel.
    monkeypatch.setattr(model_files, "_installed_wheel_dir", lambda download: None)
    checks = by_name(diagnose(settings.with_(model_cache_dir=tmp_path), str(tmp_path)))
    assert checks["query model"].state == SKIPPED
    assert "not fetched yet" in checks["query model"].detail
    assert "rag-retrieve model install" in checks["query model"].fix
    assert not (tmp_path / "models").exists()  # doctor fetches nothing


def test_a_default_model_not_fetched_with_fetching_off_fails_with_the_fix(
    tmp_path, settings, monkeypatch
):
    monkeypatch.setattr(model_files, "_installed_wheel_dir", lambda download: None)
    off = settings.with_(model_cache_dir=tmp_path, model_fetch="off")
    check = by_name(diagnose(off, str(tmp_path)))["query model"]
    assert check.state == FAILED and "RAG_MODEL_FETCH=off" in check.detail
    assert "RAG_EMBEDDING_MODEL" in check.fix
