"""bench/first_answer.py's reading of what its poller saw, and its SciFact conversion."""

from __future__ import annotations

import json
from pathlib import Path

from bench.first_answer import milestones, scifact_jsonl


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
