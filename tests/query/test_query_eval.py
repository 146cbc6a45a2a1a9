"""`python -m query.eval` scores BEIR-format data through the real query pipeline.

Most tests run in-process on tests/fixtures/eval/tiny (12 documents, 6 queries, one of them
judged only with grade 0) with a hashed bag-of-words embedder standing in for MiniLM, so
they take seconds; one test runs the command line with the real model.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path
from types import SimpleNamespace

import pytest

from core.settings import Settings, SettingsError
from core.store.open import open_store
from query.eval.beir import DatasetError, load_beir
from query.eval.index import looks_like_python
from query.eval.runner import parse_modes, request_fields, run_eval
from query.retrieval.pipeline import make_request
from query.types import DEFAULT_FUSION
from tests.support.embedders import HashEmbedder
from tests.support.eval import TINY, evaluate, identity_expansion
from tests.support.paths import ROOT

SHARED = ROOT.parent / "shared" / "data"


# Reading the data


def test_only_queries_with_a_relevant_judgement_are_evaluated():
    data = load_beir(TINY, "test")
    assert len(data.corpus) == 12 and len(data.queries) == 6
    # q6 is judged with grade 0 only: BEIR leaves it out.
    assert data.judged_queries() == ["q1", "q2", "q3", "q4", "q5"]
    assert data.qrels["q5"] == {"d11": 2, "d1": 1}


def test_a_missing_split_names_the_file_and_the_splits_there_are(tmp_path):
    with pytest.raises(DatasetError, match=r"qrels/dev\.tsv not found\); its splits: test"):
        load_beir(TINY, "dev")


def test_a_malformed_qrels_row_names_its_line(tmp_path):
    (tmp_path / "qrels").mkdir()
    for name in ("corpus.jsonl", "queries.jsonl"):
        (tmp_path / name).write_text((TINY / name).read_text())
    (tmp_path / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\thigh\n")
    with pytest.raises(DatasetError, match=r"test\.tsv:2: malformed row"):
        load_beir(tmp_path, "test")


def test_python_source_goes_to_the_python_chunker_and_prose_does_not():
    data = load_beir(TINY, "test")
    assert looks_like_python(data.corpus["d8"][1])
    assert not looks_like_python(data.corpus["d1"][1])
    assert not looks_like_python("def is a keyword, said the abstract (unbalanced")


def test_python_source_the_compiler_warns_about_is_still_python():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning would surface as a SyntaxError
        assert looks_like_python('def split(text):\n    return re.split("\\s+", text)\n')


# Modes


def test_the_hybrid_mode_runs_what_python_m_query_runs_by_default():
    default = make_request({"query": "q"})
    fields = request_fields("hybrid")
    assert (fields["fusion"], fields["expand"], fields["mode"], fields["links"]) == (
        default.fusion,
        default.expand,
        default.mode,
        default.links,
    )


def test_modes_map_to_pipeline_requests():
    assert request_fields("hybrid") == {
        "fusion": DEFAULT_FUSION,
        "mode": "hybrid",
        "rerank": False,
        "corag": False,
        "links": True,
        "expand": True,
        "top_k": 100,
    }
    assert request_fields("hybrid+rerank")["rerank"] is True
    assert request_fields("hybrid+corag")["corag"] is True
    assert request_fields("hybrid+corag")["rerank"] is False
    assert request_fields("hybrid", "rrf")["fusion"] == "rrf"
    assert request_fields("bm25-noexpand") == {
        "fusion": DEFAULT_FUSION,
        "mode": "bm25",
        "rerank": False,
        "corag": False,
        "links": False,
        "expand": False,
        "top_k": 100,
    }
    assert parse_modes("bm25, hybrid-noexpand,bm25") == ["bm25", "hybrid-noexpand"]
    with pytest.raises(SettingsError, match="unknown mode 'dense'"):
        parse_modes("bm25,dense")


# Scoring through the pipeline


def test_bm25_finds_each_distinctive_query_at_rank_one(tmp_path):
    runs: dict[str, dict[str, list[str]]] = {}
    report = evaluate(tmp_path, ["bm25"], runs=runs)
    assert report["queries"] == 5 and report["judged_queries"] == 5
    assert [runs["bm25"][q][0] for q in ("q1", "q2", "q3", "q4")] == ["d1", "d3", "d8", "d12"]
    bm25 = report["modes"]["bm25"]
    assert bm25["recall@100"] == 1.0
    assert bm25["latency_ms"] > 0
    for key in ("ndcg@10", "recall@10", "recall@100", "mrr@10"):
        assert 0.0 <= bm25[key] <= 1.0


def test_a_document_split_into_chunks_ranks_once_at_its_best_chunk(tmp_path):
    runs: dict[str, dict[str, list[str]]] = {}
    report = evaluate(tmp_path, ["bm25"], runs=runs)
    assert report["index"]["chunks"] > report["documents"]  # d12 is long enough to split
    ranking = runs["bm25"]["q4"]
    assert ranking[0] == "d12"
    assert ranking.count("d12") == 1


def test_rerank_without_a_reranker_is_reported_unavailable_not_copied(tmp_path):
    report = evaluate(tmp_path, ["hybrid", "hybrid+rerank"])
    assert "ndcg@10" in report["modes"]["hybrid"]
    rerank = report["modes"]["hybrid+rerank"]
    assert set(rerank) == {"unavailable"}
    assert "no reranker" in rerank["unavailable"]


def test_expansion_method_is_reported_and_noexpand_turns_it_off(tmp_path):
    report = evaluate(tmp_path, ["hybrid", "hybrid-noexpand"])
    assert report["modes"]["hybrid"]["expansion"] == {"test-identity": 5}
    assert report["modes"]["hybrid-noexpand"]["expansion"] == {"off": 5}


def test_corag_mode_runs_the_corag_hops_and_counts_them(tmp_path):
    calls: list[str] = []

    def one_hop(question, retrieve, *, llm, max_hops, first, bridges=None):
        calls.append(question)
        more = retrieve("glaciers carve valleys")
        new = [c for c in more if c.key not in {f.key for f in first}]
        hop = SimpleNamespace(
            query="glaciers carve valleys", new_chunk_ids=[c.chunk_id for c in new], reason="t"
        )
        return [*first, *new], [hop], []

    report = evaluate(tmp_path, ["hybrid+corag"], parts={"corag_runner": one_hop}, limit=2)
    corag = report["modes"]["hybrid+corag"]
    assert len(calls) == 2
    assert corag["corag_hops"] == 1.0
    assert corag["queries"] == 2


def test_limit_queries_takes_the_first_judged_queries(tmp_path):
    runs: dict[str, dict[str, list[str]]] = {}
    report = evaluate(tmp_path, ["bm25"], limit=2, runs=runs)
    assert report["queries"] == 2
    assert sorted(runs["bm25"]) == ["q1", "q2"]


def test_a_kept_store_is_reused_without_embedding_again(tmp_path):
    first = evaluate(tmp_path, ["bm25"], store_dir=tmp_path / "store")
    second = evaluate(tmp_path, ["bm25"], store_dir=tmp_path / "store")
    assert first["index"]["reused"] == 0 and first["index"]["embedded"] > 0
    assert second["index"]["reused"] == 12 and second["index"]["embedded"] == 0
    assert second["modes"]["bm25"]["ndcg@10"] == first["modes"]["bm25"]["ndcg@10"]


def test_records_are_indexed_as_a_users_jsonl_records_named_by_their_id_without_a_path(tmp_path):
    evaluate(tmp_path, ["bm25"], store_dir=tmp_path / "store")
    store = open_store(str(tmp_path / "store"), Settings(index_dir=tmp_path / "cache"))
    index = store.open_index("eval-tiny")
    try:
        rows = index.fetch(index.sample_chunk_ids(1000)).values()
    finally:
        index.close()
    assert {r["doc_id"] for r in rows} == set(load_beir(TINY, "test").corpus)
    assert {r["path"] for r in rows} == {None}


# The command line, with the real model


def _env(tmp_path: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("RERANKER_", "RAG_RERANKER", "OPENCLAW_", "EMBEDDING_", "TIDB_"))
    }
    env["RAG_INDEX_DIR"] = str(tmp_path / "cache")
    return env


@pytest.mark.slow
def test_cli_prints_a_table_progress_and_a_json_last_line(tmp_path):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "query.eval",
            str(TINY),
            "--modes",
            "bm25,vector,hybrid,hybrid+rerank",
            "--limit-queries",
            "4",
            "--json",
        ],
        cwd=ROOT,
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert (report["dataset"], report["split"], report["queries"]) == ("tiny", "test", 4)
    assert list(report["modes"]) == ["bm25", "vector", "hybrid", "hybrid+rerank"]
    for mode in ("bm25", "vector", "hybrid"):
        scores = report["modes"][mode]
        assert set(scores) >= {"ndcg@10", "recall@10", "recall@100", "mrr@10", "latency_ms"}
    # Four queries with distinctive words: BM25 puts every answer first.
    assert report["modes"]["bm25"]["mrr@10"] == 1.0
    assert report["modes"]["vector"]["recall@10"] == 1.0
    assert "unavailable" in report["modes"]["hybrid+rerank"]
    assert "nDCG@10" in proc.stdout and "hybrid+rerank" in proc.stdout
    assert "evaluated bm25: 4 queries in" in proc.stderr


def test_cli_bad_usage_exits_2_with_a_message(tmp_path):
    for args, message in (
        ([str(TINY), "--split", "dev"], "qrels/dev.tsv not found"),
        ([str(TINY), "--modes", "bm25,dense"], "unknown mode 'dense'"),
        ([str(TINY), "--limit-queries", "0"], "--limit-queries must be at least 1"),
        ([str(TINY), "--index", "mine"], "--index needs --store"),
        ([str(TINY), "--index", "mine", "--store", str(tmp_path / "s")], "no index 'mine'"),
    ):
        proc = subprocess.run(
            [sys.executable, "-m", "query.eval", *args],
            cwd=ROOT,
            env=_env(tmp_path),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 2, (args, proc.stderr)
        assert message in proc.stderr


# The shared dev sets (skipped where they are absent)


@pytest.mark.skipif(not (SHARED / "scifact").is_dir(), reason="no ../shared/data/scifact")
def test_shared_scifact_train_split_has_the_documented_size():
    data = load_beir(SHARED / "scifact", "train")
    assert len(data.corpus) == 5183
    assert len(data.judged_queries()) == 809


def test_rrf_merge_interleaves_hop_chunks_with_the_first_retrieval():
    from query.eval.runner import rrf_merge
    from query.types import Candidate

    first = [Candidate(chunk_id=c, index="i") for c in "abc"]
    new = [Candidate(chunk_id=c, index="i") for c in "de"]

    def appended(question, retrieve, *, llm, max_hops, first, bridges=None):
        hop = SimpleNamespace(query="f", new_chunk_ids=["d", "e"], reason="r")
        return [*first, *new], [hop], ["stopped"]

    gathered, hops, notes = rrf_merge(appended, k=60)("q", None, llm=None, max_hops=1, first=first)
    # Rank 1 of the first retrieval and rank 1 of the hop tie at 1/61: gathered order decides.
    assert [c.chunk_id for c in gathered] == ["a", "d", "b", "e", "c"]
    assert len(hops) == 1 and notes[0] == "stopped"


def test_a_query_the_pipeline_refuses_scores_zero_and_is_noted(tmp_path):
    data_dir = tmp_path / "data"
    (data_dir / "qrels").mkdir(parents=True)
    (data_dir / "corpus.jsonl").write_text((TINY / "corpus.jsonl").read_text())
    queries = (TINY / "queries.jsonl").read_text()
    queries += json.dumps({"_id": "blank", "text": "   "}) + "\n"
    (data_dir / "queries.jsonl").write_text(queries)
    (data_dir / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\nq1\td1\t1\nblank\td2\t1\n"
    )
    settings = Settings(index_dir=tmp_path / "cache", candidates_per_signal=100)
    report = run_eval(
        data_dir,
        split="test",
        modes=["bm25"],
        settings=settings,
        store_dir=None,
        limit=None,
        log=lambda message: None,
        engine_parts={"embedder": HashEmbedder(), "expander": identity_expansion},
    )
    bm25 = report["modes"]["bm25"]
    assert report["queries"] == 2
    assert bm25["mrr@10"] == 0.5  # q1 found at rank 1, the blank query counts as 0
    assert any(note.startswith("query refused: empty query") for note in bm25["notes"])


# A set that judges a directory of files


def test_coverage_is_reported_apart_for_questions_needing_two_and_three_or_more_documents():
    from query.eval.runner import coverage_by_documents_needed

    qrels = {"a": {"d1": 1}, "b": {"d1": 1, "d2": 1}, "c": {"d1": 1, "d2": 1, "d3": 2}}
    per_query = [
        {"all@10": 1.0, "all@20": 1.0},
        {"all@10": 0.0, "all@20": 1.0},
        {"all@10": 1.0, "all@20": 1.0},
    ]
    assert coverage_by_documents_needed(["a", "b", "c"], qrels, per_query) == {
        "2": {"queries": 1.0, "all@10": 0.0, "all@20": 1.0},
        "3+": {"queries": 1.0, "all@10": 1.0, "all@20": 1.0},
    }
