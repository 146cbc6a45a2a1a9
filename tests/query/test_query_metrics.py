"""Ranking metrics follow BEIR's conventions (pytrec_eval / trec_eval): linear-gain nDCG
over graded judgements, relevance = grade > 0, each document counted once at its best rank.
Expected values are worked out by hand in the comments."""

from __future__ import annotations

import math

import pytest

from query.eval.metrics import (
    all_relevant_at,
    mean_scores,
    mrr_at,
    ndcg_at,
    recall_at,
    score_query,
    unique_ranking,
)

LOG2_3 = math.log2(3)  # discount of rank 2


def test_ndcg_uses_linear_gain_over_graded_judgements():
    # Run a, b, c; judged b=2, c=1, d=1 (d never retrieved).
    # DCG  = 0/log2(2) + 2/log2(3) + 1/log2(4) = 1.261860 + 0.5 = 1.761860
    # IDCG = 2/log2(2) + 1/log2(3) + 1/log2(4) = 2 + 0.630930 + 0.5 = 3.130930
    # nDCG = 1.761860 / 3.130930 = 0.562727
    qrels = {"b": 2, "c": 1, "d": 1}
    assert ndcg_at(["a", "b", "c"], qrels, 10) == pytest.approx(0.562727, abs=1e-6)
    # The exponential-gain variant (2^g - 1) would give (3/log2(3) + 0.5) / (3 + 1/log2(3)
    # + 0.5) = 0.579; BEIR's figures use the linear one.
    assert ndcg_at(["a", "b", "c"], qrels, 10) != pytest.approx(0.579, abs=1e-3)


def test_ndcg_is_one_for_the_ideal_order_and_lower_for_a_swapped_one():
    qrels = {"x": 2, "y": 1}
    assert ndcg_at(["x", "y", "z"], qrels, 10) == pytest.approx(1.0)
    # Swapped: DCG = 1 + 2/log2(3) = 2.261860; IDCG = 2 + 1/log2(3) = 2.630930.
    assert ndcg_at(["y", "x"], qrels, 10) == pytest.approx(
        (1 + 2 / LOG2_3) / (2 + 1 / LOG2_3), abs=1e-9
    )
    assert ndcg_at(["y", "x"], qrels, 10) == pytest.approx(0.859719, abs=1e-6)


def test_ndcg_cut_applies_to_the_ideal_ranking_too():
    # Twelve relevant docs, the run holds only the first ten: nDCG@10 is still perfect,
    # because the ideal DCG is also cut at 10.
    qrels = {f"d{i}": 1 for i in range(12)}
    assert ndcg_at([f"d{i}" for i in range(10)], qrels, 10) == pytest.approx(1.0)
    assert recall_at([f"d{i}" for i in range(10)], qrels, 10) == pytest.approx(10 / 12)


def test_a_relevant_document_beyond_the_cutoff_scores_nothing():
    run = [f"n{i}" for i in range(10)] + ["hit"]  # "hit" at rank 11
    qrels = {"hit": 1}
    assert ndcg_at(run, qrels, 10) == 0.0
    assert recall_at(run, qrels, 10) == 0.0
    assert mrr_at(run, qrels, 10) == 0.0
    assert recall_at(run, qrels, 100) == 1.0


def test_grade_zero_judgements_are_not_relevant():
    qrels = {"a": 0, "b": 1}
    assert mrr_at(["a", "b"], qrels, 10) == 0.5
    # Only b is relevant: DCG = 1/log2(3), IDCG = 1.
    assert ndcg_at(["a", "b"], qrels, 10) == pytest.approx(1 / LOG2_3)
    assert recall_at(["a"], qrels, 10) == 0.0


def test_recall_counts_relevant_documents_found_over_relevant_judged():
    qrels = {"b": 2, "c": 1, "d": 1}
    assert recall_at(["a", "b", "c"], qrels, 10) == pytest.approx(2 / 3)
    assert recall_at(["a", "b", "c"], qrels, 2) == pytest.approx(1 / 3)


def test_mrr_is_the_reciprocal_rank_of_the_first_relevant_document():
    assert mrr_at(["a", "b", "c"], {"c": 1, "b": 1}, 10) == 0.5
    assert mrr_at(["a", "b", "c"], {"a": 1}, 10) == 1.0
    assert mrr_at(["a", "b", "c"], {"z": 1}, 10) == 0.0


def test_a_document_retrieved_twice_counts_once_at_its_best_rank():
    # Two chunks of document a at ranks 1 and 2: b moves up to rank 2.
    assert unique_ranking(["a", "a", "b"]) == ["a", "b"]
    assert mrr_at(["a", "a", "b"], {"b": 1}, 10) == 0.5
    assert ndcg_at(["a", "a", "b"], {"b": 1}, 10) == pytest.approx(1 / LOG2_3)
    # Ten copies of a do not push b out of the top 10.
    assert recall_at(["a"] * 10 + ["b"], {"b": 1}, 10) == 1.0


def test_all_relevant_requires_every_supporting_document():
    qrels = {"p1": 1, "p2": 1}
    assert all_relevant_at(["p1", "x", "p2"], qrels, 10) == 1.0
    assert all_relevant_at(["p1", "x", "p2"], qrels, 2) == 0.0
    assert all_relevant_at(["p1"], qrels, 10) == 0.0


def test_a_query_without_relevant_judgements_scores_zero_not_an_error():
    for fn in (ndcg_at, recall_at, mrr_at, all_relevant_at):
        assert fn(["a"], {"a": 0}, 10) == 0.0
        assert fn([], {}, 10) == 0.0


def test_an_empty_run_scores_zero():
    assert score_query([], {"a": 1}) == {
        "ndcg@10": 0.0,
        "recall@10": 0.0,
        "recall@100": 0.0,
        "mrr@10": 0.0,
        "all@10": 0.0,
        "all@20": 0.0,
    }


def test_mean_scores_averages_each_metric_over_queries():
    per_query = [score_query(["a"], {"a": 1}), score_query(["x", "b"], {"b": 1})]
    means = mean_scores(per_query)
    assert means["mrr@10"] == pytest.approx((1.0 + 0.5) / 2)
    assert means["recall@10"] == pytest.approx(1.0)
    assert means["ndcg@10"] == pytest.approx((1.0 + 1 / LOG2_3) / 2)
    assert mean_scores([]) == {}
