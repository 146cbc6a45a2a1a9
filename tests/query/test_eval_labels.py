"""`query.eval` scores the questions of each label their metadata gives them (a kind, a style,
a level) apart: which labels group questions, and how a query's metadata becomes labels."""

from __future__ import annotations

from query.eval.beir import load_beir
from query.eval.runner import MAX_LABEL_VALUES, scores_by_label


def test_questions_are_scored_apart_by_each_label_their_metadata_gives_them():
    labels = {
        "a": {"kind": "where", "answer": "x"},
        "b": {"kind": "usage", "answer": "y"},
        "c": {"kind": "usage", "answer": "z"},
    }
    per_query = [
        {"ndcg@10": 1.0, "recall@10": 1.0},
        {"ndcg@10": 0.5, "recall@10": 1.0},
        {"ndcg@10": 0.0, "recall@10": 0.0},
    ]
    # `answer` has a value per question: it names no group.
    assert scores_by_label(["a", "b", "c"], labels, per_query) == {
        "kind": {
            "usage": {"queries": 2.0, "ndcg@10": 0.25, "recall@10": 0.5},
            "where": {"queries": 1.0, "ndcg@10": 1.0, "recall@10": 1.0},
        }
    }


def test_a_label_with_one_value_or_one_per_question_is_not_a_grouping():
    ids = [f"q{i}" for i in range(MAX_LABEL_VALUES + 1)]
    per_query = [{"ndcg@10": 1.0, "recall@10": 1.0}] * len(ids)
    assert scores_by_label(ids, {q: {"set": "same", "answer": q} for q in ids}, per_query) == {}


def test_string_metadata_of_a_query_becomes_its_labels(tmp_path):
    dataset = tmp_path / "labelled"
    (dataset / "qrels").mkdir(parents=True)
    (dataset / "corpus.jsonl").write_text('{"_id": "d1", "title": "", "text": "words"}\n')
    (dataset / "queries.jsonl").write_text(
        '{"_id": "q1", "text": "words", "metadata": {"kind": "usage", "facts": [1, 2]}}\n'
    )
    (dataset / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    assert load_beir(dataset, "test").labels == {"q1": {"kind": "usage"}}
