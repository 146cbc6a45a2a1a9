"""Fusion ranks documents by their best chunk in each leg; hits that do not name their
documents have them read once."""

from __future__ import annotations

import pytest

from core.store.contract import Hit
from query.retrieval.fusion import fuse
from query.retrieval.pipeline import answer
from query.types import QueryRequest, RankedList
from tests.support.fusion import ranked
from tests.support.query import FakeIndex, fake_engine, row


def test_hits_that_do_not_name_their_documents_have_their_light_rows_read_once():
    # A store whose searches do not carry doc_ids (TiDB): every hit's light row is read in
    # one round trip before fusion, and the candidates reuse those rows.
    ids = [f"c{i}" for i in range(40)]
    index = FakeIndex("docs", [row(c, doc_id=c) for c in ids], vector=ids[:5], bm25=ids)
    calls: list[list[str]] = []
    read = index.fetch_light
    index.fetch_light = lambda chunk_ids: calls.append(list(chunk_ids)) or read(chunk_ids)

    answer(QueryRequest(query="where is the trip saved", rerank=False), fake_engine(index))

    assert calls == [ids]


def documented(signal: str, chunks: list[tuple[str, str]]) -> RankedList:
    """A list of (chunk, its document) hits, best first, as a store's search returns them."""
    hits = [Hit(c, float(len(chunks) - i), None, d) for i, (c, d) in enumerate(chunks)]
    return RankedList.of_index(signal, "docs", 0, hits)


def test_a_document_found_by_both_legs_through_different_chunks_ranks_as_found_by_both():
    # The vector leg finds document A by a1, BM25 by a2; one chunk of B is second to both.
    lists = [
        documented("vector", [("a1", "A"), ("x", "X"), ("b", "B")]),
        documented("bm25", [("b", "B"), ("a2", "A")]),
    ]
    chunk_level = fuse(
        [RankedList.of_index(r.signal, "docs", 0, [h._replace(doc_id=None) for _, h in r.hits])
         for r in lists],
        k=60,
    )  # fmt: skip
    assert [c.chunk_id for c in chunk_level][:2] == ["b", "a1"]

    fused = fuse(lists, k=60)

    assert [c.chunk_id for c in fused][:2] == ["a1", "b"]
    first = fused[0]
    assert first.contributions == pytest.approx({"vector": 1 / 61, "bm25": 1 / 62})


def test_a_documents_other_chunks_keep_their_own_standing():
    lists = [
        documented("vector", [("a1", "A"), ("x", "X"), ("b", "B")]),
        documented("bm25", [("b", "B"), ("a2", "A")]),
    ]
    fused = {c.chunk_id: c.score for c in fuse(lists, k=60)}
    assert fused["a2"] == pytest.approx(1 / 62)
    assert fused["x"] == pytest.approx(1 / 62)


def test_documents_can_be_given_for_hits_that_do_not_name_theirs():
    lists = [ranked("vector", ["a1", "x", "b"]), ranked("bm25", ["b", "a2"])]
    documents = {("docs", "a1"): "A", ("docs", "a2"): "A"}
    assert [c.chunk_id for c in fuse(lists, k=60, documents=documents)][0] == "a1"
    assert [c.chunk_id for c in fuse(lists, k=60)][0] == "b"


def test_the_adaptive_rule_ranks_documents_by_their_best_chunk_in_each_leg():
    lists = [
        documented("vector", [("a1", "A"), ("b", "B"), ("a2", "A")]),
        documented("bm25", [("a2", "A"), ("b", "B")]),
    ]
    fused = fuse(lists, method="adaptive")
    # Fewer than ten keyword documents: weights 0.4 / 0.6. a2 is A's best chunk summed (0.6
    # against a1's 0.4), and stands for A with the vector leg's best (a1's 1.0) and its own.
    assert fused[0].chunk_id == "a2"
    assert fused[0].contributions == pytest.approx({"vector": 0.4, "bm25": 0.6})
