"""bench/fusion_lists.py scores each rule of its grid on recorded lists with the pipeline's
own fusion, documents ranked where their best chunk ranks."""

from __future__ import annotations

import pytest

from bench.fusion_lists import GRID, score_set


def question(
    bm25: list[tuple[str, float, str]], vector: list[tuple[str, float, str]], relevant: str
):
    return {
        "qid": "q",
        "names_identifier": False,
        "qrels": {relevant: 1},
        "bm25": bm25,
        "vector": vector,
    }


def test_each_leg_alone_scores_its_own_ranking_of_documents():
    # BM25 finds page A first; the vector leg puts page B first and A second.
    found = question(
        bm25=[("a1", 9.0, "A"), ("b1", 3.0, "B")],
        vector=[("b1", 0.9, "B"), ("a2", 0.8, "A")],
        relevant="A",
    )

    scores = score_set([found])

    assert scores["bm25"] == pytest.approx(1.0)
    assert scores["vector"] == pytest.approx(1 / 1.5849625, abs=1e-4)  # A second: 1/log2(3)
    assert set(scores) == set(GRID)


def test_the_adaptive_rule_counts_the_keyword_legs_documents():
    # Ten chunks of page A lead the keyword list (flat per chunk), then ten other pages; the
    # vector leg prefers page Z. Per document the keyword match stands out and A wins.
    bm25 = [(f"a{i}", 10.0 - 0.01 * i, "A") for i in range(10)]
    bm25 += [(f"p{i}", 2.0 - 0.1 * i, f"P{i}") for i in range(10)]
    vector = [("z", 0.9, "Z")] + [(f"p{i}", 0.5 - 0.01 * i, f"P{i}") for i in range(10)]
    vector += [("a0", 0.3, "A")]

    scores = score_set([question(bm25, vector, relevant="A")])

    assert scores["adaptive"] == pytest.approx(1.0)
    assert scores["adaptive, chunks alone"] < 1.0


def test_the_rules_rank_a_document_by_its_best_chunk_in_each_leg():
    # Each leg finds page A through another chunk, second; page B's one chunk is first in
    # BM25 and third in the vector leg. Per chunk B wins RRF; per document A does.
    bm25 = [("b", 9.0, "B"), ("a2", 8.0, "A")]
    vector = [("a1", 0.9, "A"), ("x", 0.8, "X"), ("b", 0.7, "B")]

    scores = score_set([question(bm25, vector, relevant="A")])

    assert scores["rrf"] == pytest.approx(1.0)
    assert scores["rrf, chunks alone"] < 1.0
