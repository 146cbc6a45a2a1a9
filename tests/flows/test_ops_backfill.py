"""The backfill flow's own rules, run in-process against a real local Prefect API."""

from __future__ import annotations

import os
from datetime import date, timedelta
from pathlib import Path

import pytest

from core.settings import Settings
from core.store.open import open_store
from flows.backfill import BackfillRequest, backfill_flow
from tests.support.ops import (
    PrefectServer,
    copy_fixture,
    prefect_api,
    rag_env,
    read_run_artifacts,
    shared_server,
)

pytestmark = pytest.mark.slow

LONG_AGO = 946_684_800  # 2000-01-01, as a file mtime


@pytest.fixture(scope="module")
def server(request: pytest.FixtureRequest) -> PrefectServer:
    return shared_server(request.config)


@pytest.fixture
def work(tmp_path: Path, server: PrefectServer, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name, value in rag_env(tmp_path).items():
        monkeypatch.setenv(name, value)
    with prefect_api(server):
        yield tmp_path


def doc_ids(work: Path, index: str) -> set[str]:
    target = open_store(work / "indexes", Settings()).open_index(index)
    try:
        return set(target.document_states())
    finally:
        target.close()


def age(corpus: Path, *names: str) -> None:
    for name in names:
        os.utime(corpus / name, (LONG_AGO, LONG_AGO))


def yesterday() -> date:
    return date.today() - timedelta(days=1)


def test_since_reads_only_files_modified_on_or_after_the_date(work: Path) -> None:
    corpus = copy_fixture("docs", work / "corpus")
    age(corpus, "alpha.md", "beta.md", "gamma.md")
    backfill_flow(
        BackfillRequest(paths=[str(corpus)], index="since", source="ops", since=yesterday())
    )
    assert doc_ids(work, "since") == {"ops:delta.md"}


def test_since_leaves_documents_of_older_files_in_place(work: Path) -> None:
    corpus = copy_fixture("docs", work / "corpus")
    backfill_flow(BackfillRequest(paths=[str(corpus)], index="keep", source="ops"))
    (corpus / "alpha.md").unlink()
    age(corpus, "beta.md", "gamma.md")
    backfill_flow(
        BackfillRequest(paths=[str(corpus)], index="keep", source="ops", since=yesterday())
    )
    assert "ops:alpha.md" in doc_ids(work, "keep")


def test_failed_backfill_still_leaves_an_artifact_saying_why(
    work: Path, server: PrefectServer
) -> None:
    missing = work / "no-such-folder"
    state = backfill_flow(BackfillRequest(paths=[str(missing)], index="broken"), return_state=True)
    assert state.is_failed()
    artifacts = read_run_artifacts(server, state.state_details.flow_run_id)
    (artifact,) = [a for a in artifacts if a["key"] == "backfill-broken"]
    assert "**Failed:**" in artifact["data"]
    assert f"{missing}: no such file or directory" in artifact["data"]
