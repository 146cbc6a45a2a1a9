"""The deployments as an operator uses them: `python -m flows.serve` against a real local
Prefect server, a backfill triggered through the API with parameters, its artifact read back."""

from __future__ import annotations

import shutil
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from prefect.client.schemas.objects import FlowRun
from prefect.deployments import run_deployment

from tests.support.ops import FIXTURES, Served, prefect_api, read_run_artifacts, shared_serve

pytestmark = pytest.mark.slow


@dataclass
class Backfill:
    run: FlowRun
    records: Path
    index_file: Path
    artifacts: list[dict[str, Any]]


@pytest.fixture(scope="module")
def served(request: pytest.FixtureRequest) -> Served:
    return shared_serve(request.config)


@pytest.fixture(scope="module")
def backfill(served: Served) -> Backfill:
    records = served.work / "incoming" / "records.jsonl"
    records.parent.mkdir()
    shutil.copy(FIXTURES / "records.jsonl", records)
    parameters = {
        "request": {
            "paths": [str(records)],
            "index": "ops-backfill",
            "domain": "python",
            "source": "ops-api",
        }
    }
    with prefect_api(served.server):
        run = run_deployment(
            "backfill/backfill", parameters=parameters, timeout=300, poll_interval=1
        )
    artifacts = read_run_artifacts(served.server, run.id)
    return Backfill(run, records, served.index_dir / "ops-backfill.sqlite", artifacts)


def deployment(served: Served, name: str) -> dict[str, Any]:
    response = httpx.get(f"{served.server.url}/deployments/name/{name}", timeout=10)
    response.raise_for_status()
    return response.json()


def test_backfill_triggered_through_the_api_completes(backfill: Backfill, served: Served) -> None:
    assert backfill.run.state is not None
    assert backfill.run.state.is_completed(), served.log.read_text(errors="replace")[-3000:]


def test_backfill_loads_the_requested_index_with_the_given_tags(backfill: Backfill) -> None:
    with sqlite3.connect(backfill.index_file) as conn:
        docs = {row[0] for row in conn.execute("SELECT doc_id FROM documents")}
        tags = set(conn.execute("SELECT DISTINCT source, domain FROM chunks"))
    assert docs == {"ops-1", "ops-3"}
    assert tags == {("ops-api", "python")}


def test_backfill_artifact_lists_counts_and_the_reject_with_file_and_line(
    backfill: Backfill,
) -> None:
    (artifact,) = [a for a in backfill.artifacts if a["key"] == "backfill-ops-backfill"]
    assert artifact["type"] == "markdown"
    assert "| docs_new | 2 |" in artifact["data"]
    assert "| docs_rejected | 1 |" in artifact["data"]
    assert f"| {backfill.records} | 2 |" in artifact["data"]
    assert "| total |" in artifact["data"]


def test_refresh_deployment_is_scheduled_per_corpus_with_its_cron(served: Served) -> None:
    (schedule,) = deployment(served, "refresh/refresh")["schedules"]
    assert schedule["schedule"]["cron"] == "0 2 * * *"
    assert schedule["parameters"] == {"corpus": "ops-docs"}


def test_reverify_deployment_is_scheduled_per_corpus_with_its_cron(served: Served) -> None:
    (schedule,) = deployment(served, "reverify/reverify")["schedules"]
    assert schedule["schedule"]["cron"] == "30 3 * * 0"
    assert schedule["parameters"] == {"corpus": "ops-docs"}


def test_backfill_deployment_has_no_schedule(served: Served) -> None:
    assert deployment(served, "backfill/backfill")["schedules"] == []


def test_backfill_deployment_publishes_its_typed_parameter_form(served: Served) -> None:
    schema = deployment(served, "backfill/backfill")["parameter_openapi_schema"]
    fields = schema["definitions"]["BackfillRequest"]["properties"]
    expected = {
        "paths",
        "index",
        "domain",
        "source",
        "since",
        "force",
        "vectors_later",
        "embedding_model",
        "executor",
        "dask_address",
        "dask_workers",
        "endpoints",
    }
    assert set(fields) == expected
    assert all(field.get("description") for field in fields.values())
    assert fields["index"]["default"] == "default"
    assert fields["force"]["default"] is False


def test_embed_pending_deployment_fills_in_what_a_vectors_later_backfill_left(
    served: Served,
) -> None:
    records = served.work / "later" / "records.jsonl"
    records.parent.mkdir()
    shutil.copy(FIXTURES / "records.jsonl", records)
    request = {"paths": [str(records)], "index": "ops-later", "vectors_later": True}
    index_file = served.index_dir / "ops-later.sqlite"
    with prefect_api(served.server):
        backfill = run_deployment(
            "backfill/backfill", parameters={"request": request}, timeout=300, poll_interval=1
        )
        with sqlite3.connect(index_file) as conn:
            chunks, vectors = conn.execute(
                "SELECT (SELECT count(*) FROM chunks), (SELECT count(*) FROM vectors)"
            ).fetchone()
        embedded = run_deployment(
            "embed-pending/embed-pending",
            parameters={"index": "ops-later"},
            timeout=300,
            poll_interval=1,
        )
    assert backfill.state is not None and embedded.state is not None
    assert embedded.state.is_completed(), served.log.read_text(errors="replace")[-3000:]
    assert (chunks > 0, vectors) == (True, 0)
    with sqlite3.connect(index_file) as conn:
        assert conn.execute("SELECT count(*) FROM vectors").fetchone()[0] == chunks
    assert deployment(served, "embed-pending/embed-pending")["schedules"] == []
