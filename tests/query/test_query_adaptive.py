"""The adaptive rule: the keyword leg's weight from how far its top ten documents stand
out, the identifier floor, and what the response reports."""

from __future__ import annotations

import pytest

from query.retrieval.adaptive import adaptive_weights, keyword_confidence
from query.retrieval.fusion import fuse
from query.retrieval.pipeline import answer
from query.types import QueryRequest
from tests.support.fusion import ranked, scores_of
from tests.support.query import FakeIndex, fake_engine, row


def test_adaptive_fusion_trusts_the_keyword_leg_as_far_as_its_top_ten_stands_out():
    steep = [ranked("bm25", [f"k{i}" for i in range(10)], scores=[10.0] + [5.0] * 9)]
    flat = [ranked("bm25", [f"k{i}" for i in range(10)], scores=[10.0] * 9 + [9.0])]

    assert adaptive_weights(steep) == pytest.approx({"vector": 0.6, "bm25": 0.4})
    assert adaptive_weights(flat) == pytest.approx({"vector": 0.92, "bm25": 0.08})
    assert adaptive_weights([ranked("bm25", ["a", "b"])])["bm25"] == pytest.approx(0.6)
    assert adaptive_weights([ranked("vector", ["a"])]) == {"vector": 1.0, "bm25": 0.0}


def test_keyword_confidence_counts_documents_not_the_chunks_of_one_document():
    # Five sections of each of two pages lead (10..9.1); eight other pages follow (3.0..2.3).
    ids = (
        [f"a-{i}" for i in range(5)] + [f"b-{i}" for i in range(5)] + [f"p{i}-0" for i in range(8)]
    )
    scores = [10.0 - 0.1 * i for i in range(10)] + [3.0 - 0.1 * i for i in range(8)]
    lists = [ranked("bm25", ids, scores=scores)]
    documents = {("docs", c): c.split("-")[0] for c in ids}

    # Per chunk the top ten is flat (10 against 9.1); per document two pages stand out.
    assert keyword_confidence(lists) == pytest.approx(0.09)
    assert keyword_confidence(lists, documents) == pytest.approx((10.0 - 2.3) / 10.0)
    assert adaptive_weights(lists)["bm25"] == pytest.approx(0.8 * 0.09)
    assert adaptive_weights(lists, documents=documents)["bm25"] == pytest.approx(0.6)


def test_fewer_than_ten_documents_matching_is_a_distinctive_keyword_match():
    ids = [f"page-{i}" for i in range(12)]  # twelve chunks of one page
    lists = [ranked("bm25", ids, scores=[10.0 - 0.1 * i for i in range(12)])]

    assert keyword_confidence(lists) == pytest.approx(0.09)
    assert keyword_confidence(lists, {("docs", c): "page" for c in ids}) == 1.0


def test_a_query_naming_an_identifier_gives_the_keyword_leg_at_least_half():
    flat = [ranked("bm25", [f"k{i}" for i in range(10)], scores=[10.0] * 9 + [9.0])]
    steep = [ranked("bm25", ["a", "b"])]

    assert adaptive_weights(flat, names_identifier=True) == pytest.approx(
        {"vector": 0.5, "bm25": 0.5}
    )
    assert adaptive_weights(steep, names_identifier=True)["bm25"] == pytest.approx(0.6)


def test_a_question_about_uses_over_code_gives_the_keyword_leg_most_of_the_say():
    flat = [ranked("bm25", [f"k{i}" for i in range(10)], scores=[10.0] * 9 + [9.0])]

    assert adaptive_weights(flat, asks_usage=True) == pytest.approx({"vector": 0.2, "bm25": 0.8})
    assert adaptive_weights(flat, names_identifier=True, asks_usage=True)["bm25"] == (
        pytest.approx(0.8)
    )


def test_the_response_reports_the_floor_when_the_question_names_an_identifier():
    # Forty hits scored 40..1: a flat top ten, which alone would give the keyword leg 0.18.
    ids = [f"c{i}" for i in range(40)]
    index = FakeIndex("docs", [row(c, f"text {c}") for c in ids], vector=ids, bm25=ids)

    named = answer(
        QueryRequest(query="where is TripStore.save called", rerank=False), fake_engine(index)
    )
    plain = answer(QueryRequest(query="where is the trip saved", rerank=False), fake_engine(index))
    # camelCase alone is a word until an index declares it (this one declares nothing).
    undeclared = answer(
        QueryRequest(query="where is TripStore saved", rerank=False), fake_engine(index)
    )

    assert named.fusion["weights"] == pytest.approx({"vector": 0.5, "bm25": 0.5})
    assert plain.fusion["weights"] == pytest.approx({"vector": 0.82, "bm25": 0.18})
    assert undeclared.fusion["weights"] == pytest.approx({"vector": 0.82, "bm25": 0.18})
    assert named.fusion["definitions_of"] == ["TripStore.save"]


def test_the_pipeline_counts_keyword_confidence_over_the_hits_documents():
    # Forty hits scored 40..1, four chunks per document: per chunk a flat top ten (0.225),
    # per document the tenth document's best hit scores 4 (0.9).
    ids = [f"c{i}" for i in range(40)]
    rows = [row(c, f"text {c}", doc_id=f"doc{i // 4}") for i, c in enumerate(ids)]
    index = FakeIndex("docs", rows, vector=ids, bm25=ids)

    response = answer(
        QueryRequest(query="where is the trip saved", rerank=False), fake_engine(index)
    )

    assert response.fusion["keyword_confidence"] == pytest.approx(0.9)
    assert response.fusion["weights"] == pytest.approx({"vector": 0.4, "bm25": 0.6})


def test_adaptive_fusion_is_weighted_fusion_with_those_weights():
    lists = [
        ranked("vector", ["a", "b"], scores=[0.9, 0.5]),
        ranked("bm25", ["b", "a"], scores=[8.0, 2.0]),
    ]
    # Fewer than ten keyword hits: full keyword weight, 0.6.
    assert scores_of(fuse(lists, method="adaptive")) == pytest.approx({"a": 0.4, "b": 0.6})


def test_the_response_says_how_it_fused_with_which_weights():
    index = FakeIndex(
        "docs", [row(c, f"text {c}") for c in ("a", "b", "c")], vector=["a", "b"], bm25=["b", "c"]
    )

    response = answer(QueryRequest(query="question", rerank=False), fake_engine(index))

    assert response.fusion == {
        "method": "adaptive",
        "chosen_by": "default",
        "keyword_confidence": 1.0,
        "weights": {"vector": 0.4, "bm25": 0.6},
    }
    rrf = answer(QueryRequest(query="question", rerank=False, fusion="rrf"), fake_engine(index))
    assert rrf.fusion == {"method": "rrf", "rrf_k": 60}
