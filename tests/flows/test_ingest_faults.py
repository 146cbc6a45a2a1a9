"""Runs that cannot start: one clear message naming the path, a non-zero exit, nothing written.

The CLI checks the store, the index file and the model before it starts Prefect, so these
call `flows.ingest.main` in-process; a failure after the first write is in
test_ingest_atomicity.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flows.ingest import main
from flows.ingest_flow import run_ingest
from loaders.hold import HoldPoints
from loaders.summary import IngestError
from loaders.target import IngestTarget
from tests.support.ingest import INDEX, copy_corpus, ingest, settings_for


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Settings from the environment, as the CLI reads them, all inside tmp_path."""
    monkeypatch.setenv("RAG_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("RAG_INDEX_DIR", str(tmp_path / "indexes"))
    monkeypatch.setenv("RAG_STAGING_DIR", str(tmp_path / "staging"))
    return tmp_path


def cli(corpus: Path, store: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main([str(corpus), "--store", str(store), "--index", INDEX, "--json"])
    out, err = capsys.readouterr()
    return code, out, err


def only_the_error_line(out: str, err: str, code: int) -> bool:
    """stdout (--json) holds one line: the error that stderr says, and the exit code."""
    message = err.removeprefix("error: ").removesuffix("\n")
    return json.loads(out) == {"kind": "error", "message": message, "exit_code": code}


def files_under(path: Path) -> list[Path]:
    return sorted(p for p in path.rglob("*")) if path.exists() else []


def test_store_directory_that_cannot_be_created_is_one_error_naming_it(env, capsys):
    corpus = copy_corpus(env)
    # Root ignores permission bits; a regular file where a directory must go stops anyone.
    blocker = env / "not-a-directory"
    blocker.write_text("a file, not a directory\n")
    store = blocker / "indexes"

    code, out, err = cli(corpus, store, capsys)

    assert code != 0
    assert only_the_error_line(out, err, code)
    assert err.count("\n") == 1 and err.startswith("error: ") and str(store) in err
    assert blocker.read_text() == "a file, not a directory\n"
    assert files_under(env / "data") == files_under(env / "staging") == []


def test_corrupt_index_file_is_one_error_naming_it_and_stays_untouched(env, capsys):
    corpus = copy_corpus(env)
    store = env / "store"
    store.mkdir()
    broken = store / f"{INDEX}.sqlite"
    garbage = b"not an SQLite database at all " * 300
    broken.write_bytes(garbage)

    code, out, err = cli(corpus, store, capsys)

    assert code != 0
    assert only_the_error_line(out, err, code)
    assert err.count("\n") == 1 and str(broken) in err
    assert broken.read_bytes() == garbage
    assert files_under(store) == [broken]  # no -wal or -shm left next to it


def test_model_that_cannot_be_found_is_one_error_naming_its_path(env, capsys, monkeypatch):
    corpus = copy_corpus(env)
    missing = env / "models" / "no-such-model"
    monkeypatch.setenv("RAG_EMBEDDING_MODEL", str(missing))
    store = env / "store"

    code, out, err = cli(corpus, store, capsys)

    assert code != 0
    assert only_the_error_line(out, err, code)
    assert err.count("\n") == 1 and str(missing) in err
    # Checked before the index is created: no index, no staging, no embedding cache.
    assert not list(store.glob("*.sqlite*"))
    assert files_under(env / "staging") == files_under(env / "indexes") == []


def test_first_run_failing_before_its_first_commit_leaves_no_empty_index(tmp_path: Path):
    corpus = copy_corpus(tmp_path)

    def fail(stage: str, count: int) -> None:
        if stage == "load":
            raise RuntimeError(f"killed before batch {count}")

    with pytest.raises(RuntimeError, match="killed before batch 0"):
        ingest(tmp_path, corpus, holds=HoldPoints(hook=fail))

    assert not list((tmp_path / "store").glob("*.sqlite*"))
    # The chunks stay staged for the next run, which loads them without chunking again.
    assert (tmp_path / "staging" / INDEX / "chunks.parquet").is_file()
    reached: list[str] = []
    summary = ingest(
        tmp_path, corpus, holds=HoldPoints(hook=lambda stage, _: reached.append(stage))
    )
    assert summary.docs_new == 4 and summary.chunks_pending == 0
    assert "chunk" not in reached and "load" in reached


def test_missing_model_stops_run_ingest_before_the_store_is_created(tmp_path: Path):
    missing = tmp_path / "gone"
    settings = settings_for(tmp_path).with_(embedding_model=str(missing))
    with pytest.raises(IngestError, match=str(missing)):
        target = IngestTarget(store=str(tmp_path / "store"))
        run_ingest([str(copy_corpus(tmp_path))], settings, target)
    assert not (tmp_path / "store").exists()


def test_an_invalid_index_name_is_a_usage_error(env, capsys):
    corpus = copy_corpus(env)

    code = main([str(corpus), "--store", str(env / "store"), "--index", "../escape"])

    assert code == 2
    assert "invalid index name '../escape'" in capsys.readouterr().err
    assert not (env / "store").exists()


def test_a_store_url_that_is_not_tidb_is_a_usage_error_naming_it(env, capsys):
    corpus = copy_corpus(env)

    code = main([str(corpus), "--store", "http://example.com/rag", "--index", INDEX])

    assert code == 2
    assert "store 'http://example.com/rag': not a store URL" in capsys.readouterr().err


def test_a_store_that_is_a_file_is_a_usage_error(env, capsys):
    corpus = copy_corpus(env)
    store = env / "store.txt"
    store.write_text("not a directory\n")

    code = main([str(corpus), "--store", str(store), "--index", INDEX])

    assert code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(store) in err and "is a file" in err


def test_a_missing_path_is_reported_before_prefect_starts(env, capsys, monkeypatch):
    import flows.prefect_api.server

    def no_server(settings, while_starting=None):
        raise AssertionError("Prefect's server was started for a run that cannot start")

    monkeypatch.setattr(flows.prefect_api.server, "temporary_api_server", no_server)
    missing = env / "no-such-corpus"

    code = main([str(missing), "--store", str(env / "store"), "--index", INDEX])

    assert code == 2
    assert capsys.readouterr().err == f"error: {missing}: no such file or directory\n"


def test_a_rerun_reports_the_rejects_of_a_file_again(env):
    corpus = env / "records.jsonl"
    corpus.write_text('{"id": "a", "text": "Good record."}\n{"id": "b", "text": 3}\n')
    settings = settings_for(env)
    store = str(env / "store")

    first = run_ingest([str(corpus)], settings, IngestTarget(index=INDEX, store=store))
    again = run_ingest([str(corpus)], settings, IngestTarget(index=INDEX, store=store))

    assert first.docs_rejected == again.docs_rejected == 1
    assert again.files_read == 1 and again.docs_unchanged == 1
    assert again.rejects_file is not None
    assert Path(again.rejects_file).is_relative_to(env / "store" / "runs")
