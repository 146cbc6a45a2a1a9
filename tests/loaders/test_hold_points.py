"""Hold points: one mechanism for staging a fault at a named moment of an ingest, out of
process (RAG_HOLD_AT, then SIGKILL) or in process (a hook called at every point)."""

from __future__ import annotations

import pytest

from loaders.hold import HoldPoints, parse_hold


def test_a_hook_hears_every_point_with_its_stage_and_count():
    heard: list[tuple[str, int]] = []
    holds = HoldPoints(hook=lambda stage, count: heard.append((stage, count)))

    holds.advance("chunk", 3)
    holds.reached("load", 0)
    holds.reached("load", 1)

    assert heard == [("chunk", 3), ("load", 0), ("load", 1)]


def test_a_hook_that_raises_stops_the_run_at_that_point():
    def fail_at_second_batch(stage: str, count: int) -> None:
        if (stage, count) == ("load", 1):
            raise RuntimeError("killed before batch 1")

    holds = HoldPoints(hook=fail_at_second_batch)
    holds.reached("load", 0)

    with pytest.raises(RuntimeError, match="batch 1"):
        holds.reached("load", 1)


def test_without_a_spec_or_a_hook_nothing_holds():
    holds = HoldPoints()
    holds.advance("embed", 5)
    holds.reached("load", 3)
    assert holds.counts["embed"] == 5


@pytest.mark.parametrize("spec", ["load", "embed:x", "index:2", "load:-1"])
def test_a_malformed_spec_names_the_expected_shape(spec: str):
    with pytest.raises(ValueError, match="STAGE:N"):
        parse_hold(spec)
