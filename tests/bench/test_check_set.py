"""bench/check_set.py, the validator of the hand-written code question sets: a set passes only
when every judged file is one a directory ingest reads and every quote is in its file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bench.check_set import main
from tests.support.paths import ROOT

SET = ROOT / "tests" / "fixtures" / "eval" / "code-set"
CORPUS = ROOT / "tests" / "fixtures" / "eval" / "code-set-corpus"


def edited(tmp_path: Path, change) -> Path:
    """A copy of the fixture set whose queries and qrels `change(queries, qrels)` edited."""
    copy = tmp_path / "set"
    shutil.copytree(SET, copy)
    queries = [json.loads(line) for line in (copy / "queries.jsonl").read_text().splitlines()]
    qrels = (copy / "qrels" / "test.tsv").read_text().splitlines()
    qrels = change(queries, qrels) or qrels
    (copy / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
    (copy / "qrels" / "test.tsv").write_text("\n".join(qrels) + "\n")
    return copy


def test_a_set_whose_quotes_are_in_files_the_ingest_reads_passes(capsys):
    assert main(["check_set.py", str(SET), str(CORPUS)]) == 0
    assert capsys.readouterr().out.endswith("OK\n")


def test_a_judged_file_that_a_directory_ingest_skips_fails(tmp_path, capsys):
    def judge_the_png(queries, qrels):
        queries[1]["metadata"]["evidence"] = {"ios/logo.png": "named like one"}
        return [line.replace("ios/Recorder.swift", "ios/logo.png") for line in qrels]

    assert main(["check_set.py", str(edited(tmp_path, judge_the_png)), str(CORPUS)]) == 1
    assert "ios/logo.png: judged, but a directory ingest" in capsys.readouterr().out


def test_a_quote_that_is_not_in_its_file_fails(tmp_path, capsys):
    def misquote(queries, qrels):
        queries[1]["metadata"]["evidence"]["ios/Recorder.swift"] = "session.lock(fps: 60)"

    assert main(["check_set.py", str(edited(tmp_path, misquote)), str(CORPUS)]) == 1
    assert "cs-q002: evidence not found in ios/Recorder.swift" in capsys.readouterr().out


def test_one_set_keeps_one_id_prefix(tmp_path, capsys):
    def rename(queries, qrels):
        queries[1]["_id"] = "rn-q002"
        return [line.replace("cs-q002", "rn-q002") for line in qrels]

    assert main(["check_set.py", str(edited(tmp_path, rename)), str(CORPUS)]) == 1
    assert "rn-q002: a second id prefix in one set (cs, rn)" in capsys.readouterr().out


@pytest.mark.parametrize("argv", [["check_set.py"], ["check_set.py", str(SET), "/no/such/dir"]])
def test_bad_usage_exits_2(argv):
    assert main(argv) == 2
