"""Two runs writing the same index never interleave: the per-index Prefect concurrency limit
makes the second wait until the first is done. Runs on different indexes do not wait.

Both runs are triggered through the API and executed by `python -m flows.serve`, each in its
own process as in production; their slot windows are read back from their artifacts."""

from __future__ import annotations

import re
from datetime import datetime

import pytest
from prefect.deployments import run_deployment

from tests.support.ops import (
    Served,
    copy_fixture,
    prefect_api,
    read_run_artifacts,
    shared_serve,
    wait_for_runs,
)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def served(request: pytest.FixtureRequest) -> Served:
    return shared_serve(request.config)


def run_together(served: Served, *requests: dict) -> list[dict[str, str]]:
    """Trigger backfills at once; each run's artifact rows about its index slot."""
    with prefect_api(served.server):
        runs = [
            run_deployment("backfill/backfill", parameters={"request": r}, timeout=0)
            for r in requests
        ]
    finished = wait_for_runs(served.server, [run.id for run in runs], timeout=300)
    assert all(run["state_type"] == "COMPLETED" for run in finished), served.log.read_text()[-3000:]
    return [slot_rows(served, run.id) for run in runs]


def slot_rows(served: Served, run_id: object) -> dict[str, str]:
    (artifact,) = [
        a for a in read_run_artifacts(served.server, run_id) if a["key"].startswith("backfill-")
    ]
    return dict(
        re.findall(
            r"^\| (slot \w+ \(UTC\)|waited for slot \(s\)) \| (.+?) \|$",
            artifact["data"],
            re.MULTILINE,
        )
    )


def window(rows: dict[str, str]) -> tuple[datetime, datetime]:
    return (
        datetime.fromisoformat(rows["slot acquired (UTC)"]),
        datetime.fromisoformat(rows["slot released (UTC)"]),
    )


@pytest.fixture(scope="module")
def windows(served: Served) -> dict[str, list[dict[str, str]]]:
    """Three backfills at once: two write index `shared`, one writes index `solo`."""
    corpus = copy_fixture("docs", served.work / "concurrency")
    shared = {"paths": [str(corpus)], "index": "shared", "source": "ops", "force": True}
    solo = {**shared, "index": "solo"}
    first, second, alone = run_together(served, shared, shared, solo)
    return {"shared": sorted([first, second], key=window), "solo": [alone]}


def test_two_runs_on_the_same_index_do_not_overlap(windows: dict) -> None:
    first, second = windows["shared"]
    (first_start, first_end), (second_start, second_end) = window(first), window(second)
    assert first_start < first_end <= second_start < second_end
    # Not luck of timing: the second asked while the first held the slot, and waited.
    assert datetime.fromisoformat(second["slot requested (UTC)"]) < first_end
    assert float(second["waited for slot (s)"]) > 0


def test_a_run_on_another_index_does_not_wait_for_them(windows: dict) -> None:
    (solo,) = windows["solo"]
    first, second = windows["shared"]
    solo_start, solo_end = window(solo)
    # Not waiting for them means waiting less than either of them ran (a slot costs a
    # round trip to the API, seconds on a loaded box, but never a whole run).
    shortest = min((end - start).total_seconds() for start, end in map(window, (first, second)))
    assert float(solo["waited for slot (s)"]) < shortest
    assert solo_start < window(second)[1] and window(first)[0] < solo_end
