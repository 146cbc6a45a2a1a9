"""Fusion while an index's vectors fill in: a chunk without a vector yet counts its BM25
standing for the vector leg it cannot have, so the leg it is missing does not rank it below
chunks that have both (docs/evaluation.md, "While vectors fill in")."""

from __future__ import annotations

import pytest

from core.store.contract import Hit
from query.retrieval.fusion import IMPUTED, fuse
from query.retrieval.pipeline import answer
from query.types import Candidate, QueryRequest, RankedList
from tests.support.query import FakeIndex, fake_engine, row


def ranked(signal: str, ids: list[str], variant: int = 0, scores=None) -> RankedList:
    scores = scores or [float(len(ids) - i) for i in range(len(ids))]
    hits = [Hit(c, s) for c, s in zip(ids, scores, strict=True)]
    return RankedList.of_index(signal, "docs", variant, hits)


def scores_of(candidates: list[Candidate]) -> dict[str, float]:
    return {c.chunk_id: c.score for c in candidates}


def test_rrf_counts_a_pending_chunks_bm25_rank_for_its_vector_leg():
    lists = [ranked("vector", ["a"]), ranked("bm25", ["p", "a"])]
    fused = fuse(lists, k=60, pending={("docs", "p")})
    assert scores_of(fused) == pytest.approx({"p": 2 / 61, "a": 1 / 61 + 1 / 62}, rel=1e-12)
    assert [c.chunk_id for c in fused] == ["p", "a"]
    assert fused[0].contributions == pytest.approx({"bm25": 1 / 61, IMPUTED: 1 / 61})


def test_weighted_fusion_counts_a_pending_chunks_normalised_bm25_score_at_the_vector_weight():
    lists = [
        ranked("vector", ["a", "b"], scores=[0.9, 0.1]),
        ranked("bm25", ["a", "p", "b"], scores=[10.0, 6.0, 2.0]),
    ]
    fused = fuse(
        lists, method="weighted", weights={"vector": 0.6, "bm25": 0.4}, pending={("docs", "p")}
    )
    assert scores_of(fused) == pytest.approx({"a": 1.0, "p": 0.5, "b": 0.0}, abs=1e-12)


def test_only_the_variants_the_vector_leg_searched_lend_their_bm25_standing():
    # The expansion (variant 1) searched the keyword leg only, as expansion_route bm25 routes it.
    lists = [ranked("vector", ["a"]), ranked("bm25", ["a"]), ranked("bm25", ["p"], variant=1)]
    fused = fuse(lists, k=60, pending={("docs", "p")})
    assert scores_of(fused)["p"] == pytest.approx(1 / 61, rel=1e-12)


def test_a_chunk_with_a_vector_beyond_the_vector_legs_list_lends_nothing():
    ids = ["a", "b"]
    rows = [row(c, f"text {c}") for c in ids]
    request = QueryRequest(query="q", fusion="rrf", rerank=False, expand=False, links=False)
    # b has a vector, only too far down to be among the vector leg's hits.
    covered = answer(request, fake_engine(FakeIndex("docs", rows, vector=["a"], bm25=["b", "a"])))
    assert [c["chunk_id"] for c in covered.chunks] == ["a", "b"]
    pending = FakeIndex("docs", rows, vector=["a"], bm25=["b", "a"], pending=("b",))
    embedding = answer(request, fake_engine(pending))
    assert [c["chunk_id"] for c in embedding.chunks] == ["b", "a"]


def test_the_json_shows_what_a_pending_chunk_counts_for_its_vector_leg():
    rows = [row(c, f"text {c}") for c in ("a", "p")]
    index = FakeIndex("docs", rows, vector=["a"], bm25=["p", "a"], pending=("p",))
    request = QueryRequest(query="question", fusion="rrf", rerank=False, expand=False)
    chunk = next(c for c in answer(request, fake_engine(index)).chunks if c["chunk_id"] == "p")
    assert chunk["signals"][IMPUTED]["rank"] is None
    assert chunk["signals"][IMPUTED]["contribution"] == chunk["signals"]["bm25"]["contribution"]
    added = sum(s["contribution"] for s in chunk["signals"].values())
    assert added == pytest.approx(chunk["score"], abs=1e-5)


class Counting(FakeIndex):
    """A fake index that counts the questions about chunks without vectors."""

    asked = 0

    def without_vectors(self, chunk_ids: list[str]) -> set[str]:
        Counting.asked += 1
        return super().without_vectors(chunk_ids)


def test_an_index_whose_every_chunk_has_a_vector_is_not_asked_which_lack_one():
    # On TiDB the question is a round trip per query; the stats read by the plan tell.
    rows = [row(c, f"text {c}") for c in ("a", "b")]
    request = QueryRequest(query="q", rerank=False, expand=False, links=False)
    Counting.asked = 0
    answer(request, fake_engine(Counting("docs", rows)))
    assert Counting.asked == 0
    answer(request, fake_engine(Counting("docs", rows, pending=("b",))))
    assert Counting.asked == 1
