"""Progress: counts, rates and ETA, reported every few seconds, not on every step."""

from __future__ import annotations

import logging

import pytest

from core.progress import Progress


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


def test_rate_and_eta_follow_the_average_so_far(clock):
    progress = Progress(100, "embed", log=None, clock=clock)
    clock.now += 10
    progress.advance(25, tokens=5000)
    snap = progress.snapshot()
    assert (snap.rate, snap.token_rate, snap.eta_s) == (2.5, 500.0, 30.0)


def test_eta_is_unknown_before_the_first_item(clock):
    assert Progress(10, "embed", log=None, clock=clock).snapshot().eta_s is None


def test_reports_at_most_once_per_interval(clock):
    seen = []
    progress = Progress(100, "embed", log=None, on_update=seen.append, clock=clock)
    for _ in range(10):
        clock.now += 0.5
        progress.advance(1)
    assert [s.done for s in seen] == [4, 8]


def test_logs_counts_rate_and_eta_at_info(clock, caplog):
    log = logging.getLogger("test.progress")
    progress = Progress(10, "embed documents", log=log, clock=clock)
    clock.now += 2
    with caplog.at_level(logging.INFO, logger="test.progress"):
        progress.advance(4, tokens=1200)
    assert caplog.messages == [
        "embed documents: 4/10 texts (40%), 2.0 texts/s, 600 tokens/s, ETA 3s"
    ]


def test_log_may_be_any_callable_taking_the_message(clock):
    lines = []
    progress = Progress(2, "chunk documents", log=lines.append, unit="docs", clock=clock)
    clock.now += 4
    progress.advance(2)
    progress.done()
    assert lines == ["chunk documents: 2/2 docs (100%), 0.5 docs/s, in 4s"]


def test_a_quick_stage_finishes_quietly(clock, caplog):
    log = logging.getLogger("test.progress")
    with (
        caplog.at_level(logging.INFO, logger="test.progress"),
        Progress(1, "embed queries", log=log, clock=clock) as progress,
    ):
        progress.advance(1)
    assert caplog.messages == []


def test_a_long_stage_reports_its_total_when_done(clock, caplog):
    log = logging.getLogger("test.progress")
    progress = Progress(3, "load", log=log, unit="files", clock=clock)
    clock.now += 3
    progress.advance(2)
    clock.now += 1
    progress.advance(1)
    with caplog.at_level(logging.INFO, logger="test.progress"):
        final = progress.done()
    assert final.done == 3
    assert caplog.messages == ["load: 3/3 files (100%), 0.8 files/s, in 4s"]
