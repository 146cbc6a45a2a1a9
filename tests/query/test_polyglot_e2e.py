"""End to end on a repository in many languages: ingest with the real MiniLM into a temporary
store, per-language counts in the run summary, then `python -m query ... --json`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.settings import Settings
from loaders.ingest import ingest
from loaders.summary import IngestSummary
from loaders.target import IngestTarget
from query.cli.main import main
from tests.support import paths

pytestmark = pytest.mark.slow

REPO = paths.FIXTURES / "polyglot" / "repo"


@pytest.fixture(scope="module")
def ingested(tmp_path_factory) -> tuple[Path, IngestSummary]:
    base = tmp_path_factory.mktemp("polyglot")
    settings = Settings(
        data_dir=base / "data", index_dir=base / "cache", staging_dir=base / "staging"
    )
    store = base / "store"
    return store, ingest([str(REPO)], settings, IngestTarget(index="app", store=str(store)))


def test_the_run_summary_counts_chunks_per_language_and_skipped_files_per_type(ingested):
    _, summary = ingested
    assert not summary.rejects
    languages = summary.chunks_by_language
    assert {"objc", "typescript", "kotlin", "go", "rust", "c", "cpp", "ruby", "bash"} <= set(
        languages
    )
    assert sum(languages.values()) == summary.chunks_written
    assert summary.skipped_by_type == {
        ".pbxproj": 1,
        ".png": 1,
        "Podfile.lock": 1,
        "package-lock.json": 1,
    }


def ask(store: Path, capsys, *extra: str) -> list[dict]:
    code = main(["where is the auth token refreshed", "--store", str(store), "--json", *extra])
    assert code == 0
    return json.loads(capsys.readouterr().out)["chunks"]


def holding(chunks: list[dict], path: str, text: str) -> list[dict]:
    return [c for c in chunks if c["path"] == path and text in c["content"]]


def test_a_question_finds_the_typescript_function_and_objective_c_method_that_refresh_the_token(
    ingested, capsys
):
    store, _ = ingested
    chunks = ask(store, capsys)  # the default ten
    assert ("backend/src/auth/refresh.ts", "refreshAuthToken") in {
        (c["path"], c["symbol"]) for c in chunks
    }
    # The method as the header declares and documents it.
    assert holding(chunks, "ios/AuthSession.h", "- (void)refreshAuthTokenWithCompletion:")


def test_the_default_results_hold_the_objective_c_methods_implementation_too(ingested, capsys):
    store, _ = ingested
    chunks = ask(store, capsys)  # the default ten
    assert holding(chunks, "ios/AuthSession.m", "- (void)refreshAuthTokenWithCompletion:")
