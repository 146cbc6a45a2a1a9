"""Analysing a load batch in a child process: the same bodies as in process, whatever
happens to the child."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.store.sqlite import analysis_process
from core.store.sqlite.analysis_process import MIN_OFFLOAD_CHARS, AnalysisProcess, analyse_all

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def fixture_texts() -> tuple[list[str | None], list[str]]:
    """Every paragraph of the text fixtures (ASCII and not), repeated past the size at which
    a batch goes to the child; every third chunk without a context."""
    paragraphs = [
        part
        for path in sorted(FIXTURES.rglob("*"))
        if path.suffix in {".md", ".swift", ".py", ".ts", ".m", ".h"}
        for part in path.read_text(encoding="utf-8", errors="replace").split("\n\n")
        if part.strip()
    ]
    contents: list[str] = []
    while sum(map(len, contents)) < 2 * MIN_OFFLOAD_CHARS:
        contents.extend(paragraphs)
    contexts = [
        None if i % 3 == 0 else f"Section {i} › NavigationStack" for i in range(len(contents))
    ]
    return contexts, contents


@pytest.fixture
def analysis():
    process = AnalysisProcess()
    yield process
    process.close()


def test_a_large_batch_is_analysed_by_the_child_exactly_as_in_process(analysis):
    contexts, contents = fixture_texts()
    assert any(not t.isascii() for t in contents)
    bodies = analysis.submit(contexts, contents)()
    assert analysis.pid is not None
    assert bodies == analyse_all(contexts, contents)


def test_batch_after_batch_the_split_moves_and_the_bodies_stay_in_order(analysis):
    contexts, contents = fixture_texts()
    expected = analyse_all(contexts, contents)
    shares = set()
    for _ in range(4):
        shares.add(analysis.share)
        assert analysis.submit(contexts, contents)() == expected
    assert len(shares) > 1


def test_a_small_batch_is_analysed_in_process_without_starting_a_child(analysis):
    bodies = analysis.submit(["Guide"], ["NavigationStack pushes views"])()
    assert bodies == ["guide navigationstack navigation stack pushes views"]
    assert analysis.pid is None


def test_a_child_killed_while_analysing_leaves_the_batch_to_this_process(analysis):
    contexts, contents = fixture_texts()
    pending = analysis.submit(contexts, contents)
    os.kill(analysis.pid, 9)
    assert pending() == analyse_all(contexts, contents)
    assert analysis.pid is None
    # and later batches do not try the child again
    assert analysis.submit(contexts, contents)() == analyse_all(contexts, contents)
    assert analysis.pid is None


def test_an_answer_nobody_collected_does_not_block_the_next_batch(analysis):
    contexts, contents = fixture_texts()
    analysis.submit(contexts, contents)  # its write failed: never collected
    assert analysis.submit(contexts, contents)() == analyse_all(contexts, contents)
    assert analysis.pid is not None


def test_a_child_that_died_holding_an_uncollected_answer_leaves_the_next_batch_to_this_process(
    analysis,
):
    contexts, contents = fixture_texts()
    analysis.submit(contexts, contents)  # never collected
    os.kill(analysis.pid, 9)
    assert analysis.submit(contexts, contents)() == analyse_all(contexts, contents)
    assert analysis.pid is None


def test_a_child_that_cannot_start_leaves_analysis_to_this_process(analysis, monkeypatch):
    monkeypatch.setattr(analysis_process.sys, "executable", "/nonexistent/python")
    contexts, contents = fixture_texts()
    assert analysis.submit(contexts, contents)() == analyse_all(contexts, contents)


def test_close_ends_the_child(analysis):
    contexts, contents = fixture_texts()
    analysis.submit(contexts, contents)()
    pid = analysis.pid
    analysis.close()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
