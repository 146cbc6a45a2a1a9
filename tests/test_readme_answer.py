"""The README's example answer is what the sample index answers: `make run`'s index, built
here from data/sample in a temporary directory, asked the README's question."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest

from query.cli.readme_answer import REGENERATE, abridged, ask, render, same, shown_answer
from tests.support.paths import ROOT

README = ROOT / "README.md"
INGEST_TIMEOUT_S = 3600


@pytest.fixture(scope="module")
def sample_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = tmp_path_factory.mktemp("sample") / "indexes"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "flows.ingest",
            str(ROOT / "data" / "sample"),
            "--store",
            str(store),
        ],
        cwd=ROOT,
        check=True,
        capture_output=True,
        timeout=INGEST_TIMEOUT_S,
    )
    return store


@pytest.fixture
def shown() -> dict:
    return shown_answer(README.read_text(encoding="utf-8"))


@pytest.mark.slow
def test_the_example_answer_is_what_the_sample_index_answers(sample_index, shown):
    produced = abridged(ask(sample_index))
    assert same(shown, produced), (
        "README.md's example answer is not what the sample index answers now: after "
        f"`make run`, regenerate it with `{REGENERATE}`\n{render(produced)}"
    )


def test_the_shown_answer_is_the_json_the_command_prints(shown):
    assert json.loads(render(shown)) == shown
    assert {"chunks", "fusion", "timings_ms", "notes"} <= shown.keys()
    assert shown["chunks"][0]["content"].endswith("…")


def test_other_timings_still_match(shown):
    later = copy.deepcopy(shown)
    later["timings_ms"] = {stage: ms * 3 + 1 for stage, ms in shown["timings_ms"].items()}
    assert same(shown, later)


@pytest.mark.parametrize(
    "change",
    [
        lambda a: a["chunks"][0].update(score=a["chunks"][0]["score"] + 0.1),
        lambda a: a["fusion"].pop("chosen_by", None) or a["fusion"].update(chosen_by="x"),
        lambda a: a["chunks"][0].update(chunk_id="0" * 32),
        lambda a: a["timings_ms"].update(new_stage=1.0),
        lambda a: a["notes"].append("another note"),
    ],
    ids=["a score", "chosen_by", "the chunk", "a stage", "a note"],
)
def test_a_different_answer_is_stale(shown, change):
    produced = copy.deepcopy(shown)
    change(produced)
    assert not same(shown, produced)
