"""`python -m query.eval` on an index as it stands (a user's ingest, with the fusion decision
its calibration recorded) and on corpora that are directories of files, judged by path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.settings import Settings
from core.store.open import open_store
from query.calibration.calibrate import Calibration
from query.eval.beir import DatasetError, load_beir
from query.eval.runner import run_eval
from tests.support.embedders import HashEmbedder
from tests.support.eval import TINY, evaluate, ingested_index
from tests.support.paths import FIXTURES


def tiny_as_jsonl(path: Path) -> Path:
    """The tiny set's documents as a user's JSONL corpus (`id`, `title`, `text`) at `path`."""
    path.write_text(
        "".join(
            json.dumps({"id": d, "title": title, "text": text}) + "\n"
            for d, (title, text) in load_beir(TINY, "test").corpus.items()
        )
    )
    return path


def test_an_index_a_jsonl_ingest_built_is_evaluated_as_it_is_by_its_document_ids(tmp_path):
    dataset = tmp_path / "questions"  # queries and judgements only: no corpus.jsonl
    (dataset / "qrels").mkdir(parents=True)
    for name in ("queries.jsonl", "qrels/test.tsv"):
        (dataset / name).write_text((TINY / name).read_text())
    corpus = tiny_as_jsonl(tmp_path / "mine.jsonl")
    ingested_index(tmp_path, "mine", corpus)
    runs: dict[str, dict[str, list[str]]] = {}
    report = evaluate(
        tmp_path,
        ["bm25"],
        dataset=dataset,
        store_dir=tmp_path / "store",
        existing="mine",
        runs=runs,
    )
    assert report["index"]["existing"] is True and report["documents"] == 12
    assert [runs["bm25"][q][0] for q in ("q1", "q2", "q3", "q4")] == ["d1", "d3", "d8", "d12"]


def test_the_report_states_the_fusion_decision_the_index_recorded(tmp_path):
    corpus = tiny_as_jsonl(tmp_path / "mine.jsonl")
    ingested_index(tmp_path, "mine", corpus)
    decision = Calibration(
        "rrf",
        12,
        300,
        gain=0.031,
        gain_low=0.012,
        seconds=41.5,
        floor=False,
        reason="why",
        usage_floor=True,
    )
    settings = Settings(index_dir=tmp_path / "cache")
    index = open_store(str(tmp_path / "store"), settings).open_index("mine", write=True)
    try:
        index.record_fusion_calibration(decision.to_json())
    finally:
        index.close()

    report = evaluate(tmp_path, ["bm25"], store_dir=tmp_path / "store", existing="mine")

    stated = report["calibration"]
    assert (stated["rule"], stated["floor"], stated["pairs"]) == ("rrf", False, 300)
    assert stated["usage_floor"] is True
    assert (stated["gain"], stated["gain_low"], stated["seconds"]) == (0.031, 0.012, 41.5)
    assert report["index"]["calibration"] == stated


def test_an_index_never_calibrated_reports_no_decision(tmp_path):
    report = evaluate(tmp_path, ["bm25"])
    assert report["calibration"] is None


FILES = FIXTURES / "eval" / "files"
FILES_CORPUS = FIXTURES / "eval" / "files-corpus"


def test_a_directory_corpus_needs_no_corpus_jsonl_and_has_no_records():
    data = load_beir(FILES, "test", FILES_CORPUS)
    assert data.corpus == {} and data.corpus_dir == FILES_CORPUS
    assert data.judged_queries() == ["f1", "f2", "f3"]


def test_a_missing_corpus_directory_is_named(tmp_path):
    with pytest.raises(DatasetError, match="nowhere"):
        load_beir(FILES, "test", tmp_path / "nowhere")


def test_a_directory_corpus_is_ingested_as_files_and_judged_by_relative_path(tmp_path):
    logged: list[str] = []
    report = run_eval(
        FILES,
        split="test",
        modes=["bm25"],
        settings=Settings(index_dir=tmp_path / "cache", candidates_per_signal=100),
        store_dir=None,
        limit=None,
        log=logged.append,
        engine_parts={"embedder": HashEmbedder(), "reranker": None, "llm": None},
        corpus_dir=FILES_CORPUS,
    )
    assert report["documents"] == 3 and report["index"]["rejected"] == 0
    assert report["modes"]["bm25"]["recall@10"] > 0.8
    assert any("1 judged file(s) not in" in line and "Missing.md" in line for line in logged)


def test_an_index_ingested_from_a_directory_is_evaluated_as_it_is_by_relative_path(tmp_path):
    documents = ingested_index(tmp_path, "guide", FILES_CORPUS)
    # Ids an ingest gives files ("user_codebase:guide/Closures.md"), not the judged paths.
    assert not {d.doc_id for d in documents} & {"guide/Closures.md"}
    runs: dict[str, dict[str, list[str]]] = {}
    report = evaluate(
        tmp_path,
        ["bm25"],
        dataset=FILES,
        store_dir=tmp_path / "store",
        existing="guide",
        corpus_dir=FILES_CORPUS,
        runs=runs,
    )
    assert report["index"]["existing"] is True
    assert [runs["bm25"][q][0] for q in ("f1", "f2", "f3")] == [
        "proposals/0001-discardable.md",
        "guide/Closures.md",
        "guide/Strings.md",
    ]
