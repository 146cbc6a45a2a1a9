"""Two runs writing the same index never interleave: the per-index Prefect concurrency limit
makes the second wait until the first is done. Runs on different indexes do not wait.

Both runs are triggered through the API and executed by `python -m flows.serve`, each in its
own process as in production; their slot windows are read back from their artifacts."""

from __future__ import annotations

import re
from contextlib import nullcontext
from datetime import datetime

import pytest
from prefect.deployments import run_deployment

from flows.index_lock import index_slot
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


def run_together(
    served: Served, *requests: dict, hold: tuple[str, int] | None = None
) -> list[dict[str, str]]:
    """Trigger backfills at once; each run's artifact rows about its index slot. With
    `hold=(index, k)`, this process holds that index's slot until run k has finished."""
    with prefect_api(served.server), index_slot(hold[0]) if hold else nullcontext():
        runs = [
            run_deployment("backfill/backfill", parameters={"request": r}, timeout=0)
            for r in requests
        ]
        if hold:
            wait_for_runs(served.server, [runs[hold[1]].id], timeout=300)
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
    """Three backfills at once: two write index `shared`, one writes index `solo`. This
    process holds `shared`'s slot until the `solo` run has finished, so whether `solo`
    waits for the runs on `shared` does not hang on how long a run takes (a small corpus
    runs in a fraction of a second, less than a slot round trip to a busy API)."""
    corpus = copy_fixture("docs", served.work / "concurrency")
    shared = {"paths": [str(corpus)], "index": "shared", "source": "ops", "force": True}
    solo = {**shared, "index": "solo"}
    first, second, alone = run_together(served, shared, shared, solo, hold=("shared", 2))
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
    # `solo` ran to the end while `shared`'s slot was taken (had it waited for that slot,
    # the fixture's wait for it would have timed out), and the runs on `shared` started
    # only after it.
    assert window(solo)[1] <= window(first)[0] < window(second)[0]
