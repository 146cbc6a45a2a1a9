"""The CLI through the real Prefect flow: its JSON lines (core/ingest_lines.py's schema: rejects,
the summary last, an error line last on failure, under --watch run lines), and the flow-run
artifact."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey
from prefect.testing.utilities import prefect_test_harness

from core.ingest_lines import BREAKDOWN_KEYS, TIMING_KEYS
from flows.index_lock import limit_name
from flows.ingest import main
from flows.watch import report_run
from loaders.summary import SUMMARY_KEYS, IngestSummary
from loaders.watch import WatchRun
from tests.support.ingest import INDEX, copy_corpus
from tests.support.paths import FIXTURES

# tests/fixtures/sources/mixed.jsonl: five good records, and these lines rejected.
MIXED_REJECTED_LINES = [2, 3, 4, 5, 7, 8, 9, 11, 12, 14]


@pytest.fixture(scope="module")
def prefect_api():
    with prefect_test_harness(server_startup_timeout=120):
        yield


def run_cli(corpus: Path, store: Path, capsys: pytest.CaptureFixture[str]) -> dict:
    code = main([str(corpus), "--store", str(store), "--index", INDEX, "--json"])
    out = capsys.readouterr().out
    assert code == 0
    return json.loads(out.strip().splitlines()[-1])


def json_lines(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines()]


def isolate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for var, sub in (("DATA", "data"), ("INDEX", "indexes"), ("STAGING", "staging")):
        monkeypatch.setenv(f"RAG_{var}_DIR", str(tmp_path / sub))


def test_json_summary_of_first_run_and_unchanged_rerun(prefect_api, tmp_path, monkeypatch, capsys):
    for var, sub in (("DATA", "data"), ("INDEX", "indexes"), ("STAGING", "staging")):
        monkeypatch.setenv(f"RAG_{var}_DIR", str(tmp_path / sub))
    monkeypatch.setenv("RAG_CHUNK_TARGET_TOKENS", "40")
    monkeypatch.setenv("RAG_CHUNK_MAX_TOKENS", "60")
    corpus, store = copy_corpus(tmp_path), tmp_path / "store"

    first = run_cli(corpus, store, capsys)
    again = run_cli(corpus, store, capsys)

    assert list(first) == ["kind", *SUMMARY_KEYS, *BREAKDOWN_KEYS, *TIMING_KEYS] == list(again)
    assert first["kind"] == again["kind"] == "summary"
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


def test_json_reports_each_reject_as_a_line_before_the_summary(
    prefect_api, tmp_path, monkeypatch, capsys
):
    isolate(tmp_path, monkeypatch)
    corpus = tmp_path / "mixed.jsonl"
    shutil.copy(FIXTURES / "sources" / "mixed.jsonl", corpus)

    code = main([str(corpus), "--store", str(tmp_path / "store"), "--index", INDEX, "--json"])
    captured = capsys.readouterr()
    lines = json_lines(captured.out)

    assert code == 1  # records were rejected; the good ones are written
    *rejects, summary = lines
    assert [r["kind"] for r in rejects] == ["reject"] * len(MIXED_REJECTED_LINES)
    assert sorted(r["line"] for r in rejects) == MIXED_REJECTED_LINES
    assert {r["file"] for r in rejects} == {str(corpus)}
    assert rejects[0]["reason"].startswith("malformed JSON")
    assert (rejects[1]["field"], rejects[0]["field"]) == ("text", None)
    assert summary["kind"] == "summary"
    assert (summary["docs_new"], summary["docs_rejected"]) == (5, len(MIXED_REJECTED_LINES))
    # People still read them on stderr.
    assert f"rejected: {corpus}:2: malformed JSON" in captured.err


def test_json_error_line_is_the_last_line_of_a_run_that_cannot_start(tmp_path, monkeypatch, capsys):
    isolate(tmp_path, monkeypatch)
    missing = tmp_path / "no-such-corpus"

    code = main([str(missing), "--store", str(tmp_path / "store"), "--json"])
    captured = capsys.readouterr()

    assert code == 2
    assert json_lines(captured.out) == [
        {"kind": "error", "message": f"{missing}: no such file or directory", "exit_code": 2}
    ]
    assert captured.err == f"error: {missing}: no such file or directory\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--json"], "the following arguments are required: paths"),
        (["corpus", "--json", "--no-such-flag"], "unrecognized arguments: --no-such-flag"),
    ],
)
def test_json_error_line_for_arguments_argparse_refuses(args, message, capsys):
    code = main(args)
    captured = capsys.readouterr()

    assert code == 2
    assert json_lines(captured.out) == [{"kind": "error", "message": message, "exit_code": 2}]
    assert captured.err.startswith("usage: python -m flows.ingest")
    assert captured.err.endswith(f"python -m flows.ingest: error: {message}\n")


def test_without_json_an_argument_error_writes_nothing_on_stdout(capsys):
    assert main(["corpus", "--no-such-flag"]) == 2
    assert capsys.readouterr().out == ""


def test_a_watch_run_reports_its_rejects_then_its_run_line(capsys):
    reject = {"file": "notes.jsonl", "line": 3, "reason": "missing or empty text", "field": "text"}
    summary = IngestSummary(docs_seen=2, docs_new=1, docs_rejected=1, rejects=[reject])

    report_run(WatchRun(number=2, changed_paths=["notes.jsonl"], summary=summary), as_json=True)
    captured = capsys.readouterr()
    lines = json_lines(captured.out)

    assert lines[0] == {"kind": "reject", "run": 2, **reject}
    assert lines[1]["kind"] == "run"
    assert (lines[1]["run"], lines[1]["docs_new"], lines[1]["docs_rejected"]) == (2, 1, 1)
    assert len(lines) == 2
    assert "rejected: notes.jsonl:3: missing or empty text" in captured.err


def test_a_failed_watch_run_carries_its_error_in_its_run_line(capsys):
    report_run(WatchRun(number=4, changed_paths=[], error="disk full"), as_json=True)

    (line,) = json_lines(capsys.readouterr().out)
    assert line == {"kind": "run", "run": 4, "changed_paths": 0, "error": "disk full"}
