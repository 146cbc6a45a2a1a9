"""bench/first_answer.py's reading of what its poller saw, and its SciFact conversion."""

from __future__ import annotations

import json
from pathlib import Path

from bench.first_answer import milestones, stage_marks
from bench.first_answer_corpora import scifact_jsonl

MIDNIGHT = 1_795_824_000.0  # 2026-11-28 00:00 UTC


def look(t: float, chunks: int, vectors: int, hits: int) -> dict[str, float | int]:
    return {"t": t, "chunks": chunks, "vectors": vectors, "hits": hits, "poll_s": 0.01}


def test_milestones_count_from_the_start_against_the_final_chunk_count():
    lines = [
        {"t": 100.5, "missing": True, "poll_s": 0.0},
        {"t": 101.0, "error": "StoreError: not migrated yet", "poll_s": 0.0},
        look(101.5, 300, 0, 0),  # chunks loaded, none yet matching the question
        look(102.0, 600, 0, 4),
        look(102.5, 1000, 0, 10),
        look(110.0, 1000, 499, 10),
        look(111.0, 1000, 500, 10),
        look(120.0, 1000, 1000, 10),
    ]

    got = milestones(lines, t0=100.0)

    assert got["first_keyword_answer_s"] == 2.0
    assert (got["chunks_50_s"], got["chunks_100_s"]) == (2.0, 2.5)
    assert (got["vectors_50_s"], got["vectors_100_s"]) == (11.0, 20.0)
    assert (got["final_chunks"], got["polls"]) == (1000, 6)


def test_a_one_phase_ingest_reaches_everything_at_once():
    lines = [look(100.0 + i, 0, 0, 0) for i in range(1, 4)] + [look(140.0, 800, 800, 3)]

    got = milestones(lines, t0=100.0)

    assert got["first_keyword_answer_s"] == got["vectors_50_s"] == got["vectors_100_s"] == 40.0


def test_an_index_that_never_answered_has_no_milestones():
    got = milestones([{"t": 1.0, "missing": True, "poll_s": 0.0}], t0=0.0)

    assert got == {"polls": 0, "first_keyword_answer_s": None}


def test_scifact_records_become_a_users_jsonl(tmp_path: Path):
    source = tmp_path / "corpus.jsonl"
    records = [
        {"_id": 4983, "title": "White matter", "text": "Diffusion tensor imaging.", "metadata": {}},
        {"_id": "5836", "title": "Only a title", "text": "  "},
        {"_id": "7912", "title": "", "text": "Never read: past the limit."},
    ]
    source.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    out = tmp_path / "out.jsonl"

    assert scifact_jsonl(source, out, limit=2) == 2

    assert [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()] == [
        {"id": "4983", "text": "Diffusion tensor imaging.", "title": "White matter"},
        {"id": "5836", "text": "Only a title", "title": "Only a title"},
    ]


def test_stage_marks_time_the_ingests_log_lines_from_its_start():
    started = MIDNIGHT + 18 * 3600 + 5 * 60 + 25  # 18:05:25 UTC
    log = "\n".join(
        [
            "18:05:37.006 | INFO    | prefect - Starting temporary server on http://127.0.0.1:8212",
            "See https://docs.prefect.io/v3/concepts/server for more information.",
            "18:06:13.778 | INFO    | Flow run 'thankful-caterpillar' - Beginning flow run",
            "18:06:19.300 | INFO    | rag.embedding - embedding with all-MiniLM-L6-v2 on onnx",
            "18:06:49.668 | INFO    | Task run 'chunk-235' - Finished in state Completed()",
            "18:06:53.061 | INFO    | Task run 'load-180' - Finished in state Completed()",
            "18:06:54.100 | INFO    | Task run 'embed pending-b6c' - Finished in state Completed()",
        ]
    )

    assert stage_marks(log, started) == {
        "server starting": 12.01,
        "flow started": 48.78,
        "model loaded": 54.3,
        "chunk done": 84.67,
        "load done": 88.06,
        "embed pending done": 89.1,
    }


def test_stage_marks_follow_a_run_past_midnight():
    started = MIDNIGHT + 23 * 3600 + 59 * 60 + 50  # 23:59:50 UTC
    log = "00:00:05.500 | INFO    | Task run 'load-180' - Finished in state Completed()"

    assert stage_marks(log, started) == {"load done": 15.5}
