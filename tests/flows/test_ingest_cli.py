"""The CLI through the real Prefect flow: the JSON summary line, and the flow-run artifact."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey
from prefect.testing.utilities import prefect_test_harness

from flows.index_lock import limit_name
from flows.ingest import main
from loaders.summary import BREAKDOWN_KEYS, SUMMARY_KEYS
from tests.support.ingest import INDEX, copy_corpus


@pytest.fixture(scope="module")
def prefect_api():
    with prefect_test_harness(server_startup_timeout=120):
        yield


def run_cli(corpus: Path, store: Path, capsys: pytest.CaptureFixture[str]) -> dict:
    code = main([str(corpus), "--store", str(store), "--index", INDEX, "--json"])
    out = capsys.readouterr().out
    assert code == 0
    return json.loads(out.strip().splitlines()[-1])


def test_json_summary_of_first_run_and_unchanged_rerun(prefect_api, tmp_path, monkeypatch, capsys):
    for var, sub in (("DATA", "data"), ("INDEX", "indexes"), ("STAGING", "staging")):
        monkeypatch.setenv(f"RAG_{var}_DIR", str(tmp_path / sub))
    monkeypatch.setenv("RAG_CHUNK_TARGET_TOKENS", "40")
    monkeypatch.setenv("RAG_CHUNK_MAX_TOKENS", "60")
    corpus, store = copy_corpus(tmp_path), tmp_path / "store"

    first = run_cli(corpus, store, capsys)
    again = run_cli(corpus, store, capsys)

    assert list(first) == list(SUMMARY_KEYS + BREAKDOWN_KEYS) == list(again)
    assert (first["docs_new"], first["chunks_written"], first["chunks_embedded"]) == (4, 12, 12)
    assert (again["docs_unchanged"], again["chunks_written"], again["chunks_embedded"]) == (4, 0, 0)
    assert again["docs_new"] == again["docs_changed"] == again["docs_deleted"] == 0


def test_each_flow_run_leaves_a_summary_artifact(prefect_api, tmp_path, monkeypatch, capsys):
    for var, sub in (("DATA", "data"), ("INDEX", "indexes"), ("STAGING", "staging")):
        monkeypatch.setenv(f"RAG_{var}_DIR", str(tmp_path / sub))
    corpus = copy_corpus(tmp_path)
    (corpus / "tides.md").unlink()
    key = "ingest-artifact-check"

    code = main([str(corpus), "--store", str(tmp_path / "store"), "--index", key])

    assert code == 0
    with get_client(sync_client=True) as client:
        artifacts = client.read_artifacts(
            artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=[f"ingest-{key}"]))
        )
    assert len(artifacts) == 1
    assert "| docs_new | 3 |" in artifacts[0].data


def test_lock_holds_the_index_write_slot_of_the_deployments(
    prefect_api, tmp_path, monkeypatch, capsys
):
    for var, sub in (("DATA", "data"), ("INDEX", "indexes"), ("STAGING", "staging")):
        monkeypatch.setenv(f"RAG_{var}_DIR", str(tmp_path / sub))
    corpus = copy_corpus(tmp_path)
    index = "locked-run"

    code = main([str(corpus), "--store", str(tmp_path / "store"), "--index", index, "--lock"])

    assert code == 0
    with get_client(sync_client=True) as client:
        limit = client.read_global_concurrency_limit_by_name(limit_name(index))
    assert (limit.limit, limit.active_slots) == (1, 0)  # taken during the run, released after
