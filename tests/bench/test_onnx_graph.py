"""bench/onnx_graph.py's comparison of two `python -m query.eval --json` reports."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from bench.onnx_graph import compare_reports

REPORT: dict[str, Any] = {
    "dataset": "scifact",
    "index": {"chunks": 1024, "seconds": 347.5},
    "calibration": {"rule": "adaptive", "seconds": 101.7, "at": "2026-11-28T23:55:31+00:00"},
    "modes": {
        "bm25": {"ndcg@10": 0.7989, "recall@10": 0.8762, "latency_ms": 15.7, "p95_ms": 25.1},
        "vector": {"ndcg@10": 0.8158, "recall@10": 0.9154, "latency_ms": 33.0, "p95_ms": 48.2},
    },
}


def written(path: Path, report: dict[str, Any]) -> Path:
    # The eval prints progress lines first; the report is the last line.
    path.write_text("evaluated bm25: 809 queries\n" + json.dumps(report) + "\n")
    return path


def test_runs_that_differ_only_in_timings_have_no_differing_figure(tmp_path):
    other = copy.deepcopy(REPORT)
    other["index"]["seconds"] = 400.0
    other["calibration"]["at"] = "2026-11-29T00:10:00+00:00"
    other["modes"]["vector"]["latency_ms"] = 51.0

    compared = compare_reports(written(tmp_path / "a", REPORT), written(tmp_path / "b", other))

    assert compared["differing"] == {}
    assert compared["ndcg@10"] == {"bm25": [0.7989, 0.7989], "vector": [0.8158, 0.8158]}


def test_a_differing_figure_is_named_with_both_values(tmp_path):
    other = copy.deepcopy(REPORT)
    other["modes"]["vector"]["recall@10"] = 0.9141
    other["calibration"]["rule"] = "rrf"

    compared = compare_reports(written(tmp_path / "a", REPORT), written(tmp_path / "b", other))

    assert compared["differing"] == {
        "/calibration/rule": ["adaptive", "rrf"],
        "/modes/vector/recall@10": [0.9154, 0.9141],
    }
