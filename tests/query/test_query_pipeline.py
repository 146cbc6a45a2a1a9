"""The orchestrator on fake parts: signals, degradation notes, rerank, CoRAG, expansion."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from core.settings import Settings
from query.errors import UsageError, is_degraded
from query.retrieval.engine import Engine
from query.retrieval.pipeline import answer
from query.retrieval.retrieve import domains_for
from query.retrieval.trace import STAGES
from query.types import QueryRequest
from tests.support.query import (
    FakeExpansion,
    FakeIndex,
    FakeReranker,
    FakeStore,
    fake_engine,
    row,
)

ROWS = [row(c, f"text {c}") for c in ("a", "b", "c", "d")]


def request(**fields) -> QueryRequest:
    return QueryRequest(query="question", **{"rerank": False, **fields})


def chunk_ids(response) -> list[str]:
    return [c["chunk_id"] for c in response.chunks]


def test_the_response_has_every_documented_key_and_stage():
    response = answer(request(), fake_engine(FakeIndex("docs", ROWS)))
    assert set(response.to_dict()) == {
        "chunks", "total_tokens", "query_expansions", "corag_trace", "timings_ms", "notes",
        "fusion",
    }  # fmt: skip
    assert list(response.timings_ms) == list(STAGES)
    assert response.corag_trace is None and response.query_expansions == ["question"]


def test_results_fuse_across_indexes_and_name_their_index():
    engine = fake_engine(
        FakeIndex("apple", [row("a", "apple text")]), FakeIndex("py", [row("p", "py text")])
    )
    response = answer(request(), engine)
    assert sorted((c["index"], c["chunk_id"]) for c in response.chunks) == [
        ("apple", "a"),
        ("py", "p"),
    ]


def test_index_restricts_the_search():
    engine = fake_engine(FakeIndex("apple", [row("a")]), FakeIndex("py", [row("p")]))
    assert chunk_ids(answer(request(indexes=("py",)), engine)) == ["p"]


def test_an_unknown_index_is_a_usage_error_listing_the_available_ones():
    engine = fake_engine(FakeIndex("apple", ROWS), FakeIndex("py", ROWS))
    with pytest.raises(UsageError, match=r"unknown index 'nope' \(available: apple, py\)"):
        answer(request(indexes=("nope",)), engine)


def test_domain_admits_its_own_and_general_and_general_only_itself():
    assert domains_for("ios") == ("ios", "general")
    assert domains_for("general") == ("general",)
    assert domains_for(None) is None


def test_an_index_that_cannot_be_opened_is_skipped_loudly():
    response = answer(request(), fake_engine(FakeIndex("docs", ROWS), broken=("cache",)))
    assert chunk_ids(response) == ["a", "b", "c", "d"]
    assert any("index 'cache' skipped" in n for n in response.notes)
    assert is_degraded(response.to_dict())


def test_a_model_mismatch_skips_vector_search_on_that_index_loudly():
    legacy = FakeIndex("legacy", [row("l")], vector=[], model_id="other-model")
    engine = fake_engine(FakeIndex("docs", ROWS), legacy)
    response = answer(request(), engine)
    assert not [call for call in legacy.calls if call[0] == "vector"]
    assert any("legacy" in n and "'other-model'" in n for n in response.notes)
    assert is_degraded(response.to_dict())
    assert "l" in chunk_ids(response)  # BM25 still ran there


def test_an_index_without_vectors_is_searched_with_bm25_only():
    engine = fake_engine(FakeIndex("docs", ROWS, model_id=None))
    response = answer(request(), engine)
    assert any("holds no vectors" in n for n in response.notes)
    assert all(c["ranks"]["vector"] is None for c in response.chunks)


def test_no_embedder_degrades_to_bm25_on_every_index():
    response = answer(request(), fake_engine(FakeIndex("docs", ROWS), embedder=None))
    assert response.chunks and is_degraded(response.to_dict())
    assert any("vector search skipped on every index" in n for n in response.notes)


def test_a_failing_embedding_call_degrades_to_bm25():
    class DeadEndpoint:
        model_id, dim, notes = "fake-model", 4, []

        def embed_queries(self, texts):
            raise ConnectionError("endpoint down")

    response = answer(request(), fake_engine(FakeIndex("docs", ROWS), embedder=DeadEndpoint()))
    assert response.chunks and any("endpoint down" in n for n in response.notes)


def test_mode_bm25_runs_one_signal_only():
    index = FakeIndex("docs", ROWS)
    answer(request(mode="bm25"), fake_engine(index))
    assert {signal for signal, _, _ in index.calls} == {"bm25"}


def test_a_clean_answer_is_not_degraded():
    response = answer(request(), fake_engine(FakeIndex("docs", ROWS)))
    assert not is_degraded(response.to_dict())


def test_no_reranker_keeps_the_fused_order_and_says_so():
    response = answer(request(rerank=True), fake_engine(FakeIndex("docs", ROWS)))
    assert chunk_ids(response) == ["a", "b", "c", "d"]
    assert "no reranker configured; fused order kept" in response.notes


def test_reranked_candidates_come_first_and_unscored_ones_keep_their_fused_order():
    reranker = FakeReranker({"c": 5.0, "d": 9.0})  # a and b: not scored within the budget
    response = answer(request(rerank=True), fake_engine(FakeIndex("docs", ROWS), reranker=reranker))
    assert chunk_ids(response) == ["d", "c", "a", "b"]
    assert [c["ranks"]["rerank"] for c in response.chunks] == [1, 2, None, None]
    assert [c["score"] for c in response.chunks[:2]] == [9.0, 5.0]
    assert any("scored 2 of 4" in n for n in response.notes)


def test_only_the_top_rerank_candidates_are_reranked():
    reranker = FakeReranker({"a": 1.0, "b": 2.0, "c": 3.0, "d": 4.0})
    engine = fake_engine(
        FakeIndex("docs", ROWS), reranker=reranker, settings=Settings(rerank_candidates=2)
    )
    assert chunk_ids(answer(request(rerank=True), engine)) == ["b", "a", "c", "d"]


def test_expansion_variants_are_searched_and_bm25_feedback_is_handed_over():
    seen = {}

    def expander(query, **kwargs):
        seen.update(kwargs)
        return FakeExpansion([query, "other words"], notes=["expanded by fake"])

    index = FakeIndex("docs", ROWS, bm25_by_text={"other words": ["d"]})
    settings = Settings(deterministic_expansion=True)
    response = answer(
        request(expand=True), fake_engine(index, expander=expander, settings=settings)
    )
    assert response.query_expansions == ["question", "other words"]
    assert seen["feedback_texts"] == ["text a", "text b", "text c", "text d"]
    assert {text for signal, text, _ in index.calls if signal == "bm25"} == {
        "question",
        "other words",
    }
    assert "expanded by fake" in response.notes


def test_a_failing_expansion_searches_the_original_query_only():
    def broken(query, **kwargs):
        raise RuntimeError("LLM down")

    response = answer(request(expand=True), fake_engine(FakeIndex("docs", ROWS), expander=broken))
    assert response.query_expansions == ["question"] and response.chunks
    assert any("LLM down" in n for n in response.notes)


@dataclass
class Hop:
    query: str
    new_chunk_ids: list[str]
    reason: str


def test_corag_accumulates_hops_and_traces_them():
    def corag(question, retrieve, *, llm, max_hops, first, bridges=None):
        found = retrieve("follow-up")
        new = [c for c in found if c.chunk_id == "x"]
        return first + new, [Hop("follow-up", ["x"], "needed x")], ["corag note"]

    index = FakeIndex(
        "docs",
        [*ROWS, row("x", "extra")],
        vector=["a", "b"],
        bm25=["a", "b"],
        bm25_by_text={"follow-up": ["x"]},
    )
    response = answer(request(corag=True), fake_engine(index, corag_runner=corag))
    assert chunk_ids(response) == ["a", "b", "x"]
    assert response.corag_trace == [
        {"hop": 1, "query": "follow-up", "new_chunk_ids": ["x"], "reason": "needed x"}
    ]
    assert "corag note" in response.notes


def test_corag_failure_keeps_the_single_pass_results():
    def corag(*args, **kwargs):
        raise RuntimeError("boom")

    response = answer(request(corag=True), fake_engine(FakeIndex("docs", ROWS), corag_runner=corag))
    assert chunk_ids(response) == ["a", "b", "c", "d"] and response.corag_trace == []
    assert is_degraded(response.to_dict())


def test_an_empty_store_answers_nothing_with_a_note():
    response = answer(request(), fake_engine())
    assert response.chunks == [] and "holds no index" in response.notes[0]


def test_a_candidate_deleted_before_fetch_is_dropped():
    index = FakeIndex("docs", ROWS)
    index.vector = [*index.vector, "gone"]
    index.rows["gone"] = row("gone")
    original_fetch = index.fetch
    index.fetch = lambda ids: {k: v for k, v in original_fetch(ids).items() if k != "gone"}
    assert "gone" not in chunk_ids(answer(request(), fake_engine(index)))


class Closable:
    closed = False

    def close(self):
        self.closed = True


def test_the_engine_closes_the_parts_it_loaded_but_not_the_ones_it_was_given(monkeypatch):
    """A part handed in may be shared with another engine (eval does so with the embedder)."""
    loaded, given = Closable(), Closable()
    monkeypatch.setattr("query.retrieval.llm.make_chat_client", lambda settings: loaded)
    engine = Engine(Settings(), FakeStore(), reranker=given)  # the LLM left to load
    assert (engine.llm(), engine.reranker()[0]) == (loaded, given)
    engine.close()
    assert (loaded.closed, given.closed) == (True, False)


def test_an_llm_endpoint_whose_client_fails_to_load_is_noted_with_its_error(monkeypatch):
    def failing(settings):
        raise ValueError("no scheme in 'llm.internal:8000'")

    monkeypatch.setattr("query.retrieval.llm.make_chat_client", failing)
    from query.retrieval.expansion import expand_query

    engine = Engine(
        Settings(llm_endpoint="llm.internal:8000"),
        FakeStore(FakeIndex("docs", ROWS)),
        embedder=None,
        reranker=None,
        expander=expand_query,
    )  # the LLM left to load
    notes = answer(request(), engine).notes
    assert any("no scheme in 'llm.internal:8000'" in n for n in notes)
    assert not any("OPENCLAW_LLM_ENDPOINT unset" in n for n in notes)
