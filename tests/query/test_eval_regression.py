"""Quality regression guard: on a small slice of every dev set, the default pipeline (the
`hybrid` mode of query.eval, which is what `python -m query` runs) ranks at least as well as
each of its single signals, with the real model.

The slices are cut at run time from ../shared/data (the datasets are never copied into the
repository): the first SLICE_QUERIES judged queries, their judged documents, and every n-th
other document as distractors. The Swift documentation set is ours (bench/swift-docs-eval);
its corpus is a slice of the files under ../shared/data/swift-docs.

This guards the ordering against regressions; the full-set figures in docs/evaluation.md come from
`python -m query.eval` on the whole sets.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from core.settings import Settings
from query.eval.beir import load_beir
from query.eval.runner import run_eval
from tests.support.paths import ROOT

SHARED = ROOT.parent / "shared" / "data"
SWIFT_SET = ROOT / "bench" / "swift-docs-eval"
SLICE_QUERIES = 40
DISTRACTORS = 300

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def embedder() -> Any:
    from core.embedding.runtimes import load_embedder

    return load_embedder(Settings())


def beir_slice(name: str, split: str, out: Path) -> Path:
    data = load_beir(SHARED / name, split)
    queries = data.judged_queries()[:SLICE_QUERIES]
    judged = {d for q in queries for d in data.qrels[q]}
    ids = list(data.corpus)
    keep = judged | set(ids[:: max(1, len(ids) // DISTRACTORS)][:DISTRACTORS])
    (out / "qrels").mkdir(parents=True)
    with (out / "corpus.jsonl").open("w") as corpus:
        for doc_id in ids:
            if doc_id in keep:
                title, text = data.corpus[doc_id]
                corpus.write(json.dumps({"_id": doc_id, "title": title, "text": text}) + "\n")
    write_queries_and_qrels(out, queries, data.queries, data.qrels)
    return out


def swift_slice(out: Path) -> tuple[Path, Path]:
    data = load_beir(SWIFT_SET, "test", SHARED / "swift-docs")
    queries = data.judged_queries()[:SLICE_QUERIES]
    judged = {d for q in queries for d in data.qrels[q]}
    files = sorted(
        p.relative_to(SHARED / "swift-docs").as_posix()
        for p in (SHARED / "swift-docs").rglob("*.md")
    )
    others = [f for f in files if f not in judged]
    keep = judged | set(others[:: max(1, len(others) // 60)])
    corpus = out / "corpus"
    for relative in keep:
        target = corpus / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(SHARED / "swift-docs" / relative, target)
    (out / "set" / "qrels").mkdir(parents=True)
    write_queries_and_qrels(out / "set", queries, data.queries, data.qrels)
    return out / "set", corpus


def write_queries_and_qrels(
    out: Path, queries: list[str], texts: dict[str, str], qrels: dict[str, dict[str, int]]
) -> None:
    with (out / "queries.jsonl").open("w") as handle:
        for q in queries:
            handle.write(json.dumps({"_id": q, "text": texts[q]}) + "\n")
    with (out / "qrels" / "test.tsv").open("w") as handle:
        handle.write("query-id\tcorpus-id\tscore\n")
        for q in queries:
            for doc_id, grade in qrels[q].items():
                handle.write(f"{q}\t{doc_id}\t{grade}\n")


def ndcg_by_mode(dataset: Path, tmp: Path, embedder: Any, corpus: Path | None = None) -> dict:
    report = run_eval(
        dataset,
        split="test",
        modes=["bm25", "vector", "hybrid"],
        settings=Settings(index_dir=tmp / "indexes", candidates_per_signal=100),
        store_dir=None,
        limit=None,
        log=lambda message: None,
        engine_parts={"embedder": embedder},
        corpus_dir=corpus,
    )
    return {mode: result["ndcg@10"] for mode, result in report["modes"].items()}


@pytest.mark.parametrize(
    ("name", "split"), [("scifact", "train"), ("cosqa", "dev"), ("hotpotqa-100", "dev")]
)
def test_the_default_ranks_at_least_as_well_as_each_single_signal(name, split, tmp_path, embedder):
    if not (SHARED / name).is_dir():
        pytest.skip(f"no ../shared/data/{name}")
    ndcg = ndcg_by_mode(beir_slice(name, split, tmp_path / name), tmp_path, embedder)
    assert ndcg["hybrid"] >= max(ndcg["bm25"], ndcg["vector"]), ndcg


def test_on_swift_documentation_the_default_ranks_at_least_as_well_as_each_signal(
    tmp_path, embedder
):
    if not (SHARED / "swift-docs").is_dir():
        pytest.skip("no ../shared/data/swift-docs")
    dataset, corpus = swift_slice(tmp_path)
    ndcg = ndcg_by_mode(dataset, tmp_path, embedder, corpus)
    assert ndcg["hybrid"] >= max(ndcg["bm25"], ndcg["vector"]), ndcg
