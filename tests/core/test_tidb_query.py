"""The query side's use of the optional one-round-trip `hybrid_search` (which the TiDB store
offers): used when an index has it, same rankings as the two searches, never required."""

from __future__ import annotations

from core.settings import Settings
from core.store.contract import HybridHits
from query.retrieval.retrieve import Retriever
from query.retrieval.trace import Trace
from query.types import QueryRequest
from tests.support.query import FakeIndex, fake_engine, row

ROWS = [row("a"), row("b"), row("c", domain="web")]


class HybridFakeIndex(FakeIndex):
    """A FakeIndex that also answers both signals in one call, counting the calls."""

    def __init__(self, *args, fail: bool = False, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.hybrid_calls: list[str] = []
        self.fail = fail

    def hybrid_search(self, query, text, filt, k) -> HybridHits:
        self.hybrid_calls.append(text)
        if self.fail:
            raise RuntimeError("server went away")
        vector = self._ranked(self.vector, filt, k)
        bm25 = self._ranked(self.bm25_by_text.get(text, self.bm25), filt, k)
        return HybridHits(vector, bm25)


def ranked(
    index: FakeIndex, variants: list[str], settings: Settings | None = None, **request
) -> tuple[list, Trace]:
    engine = fake_engine(index, settings=settings)
    trace = Trace()
    retriever = Retriever(engine, QueryRequest(query="q", **request), ["docs"], trace)
    lists = retriever.ranked_lists(variants)
    return [(r.signal, [(name, h.chunk_id) for name, h in r.hits]) for r in lists], trace


def test_an_index_with_hybrid_search_is_asked_once_per_variant():
    index = HybridFakeIndex("docs", ROWS, vector=["b", "a", "c"], bm25=["c", "a"])
    ranked(index, ["q", "q two"], settings=Settings(expansion_route="both"))
    assert index.hybrid_calls == ["q", "q two"]
    assert [c[0] for c in index.calls] == []  # no separate vector or BM25 search


def test_expansions_routed_to_the_keyword_leg_are_one_bm25_search_each():
    index = HybridFakeIndex("docs", ROWS, vector=["b", "a", "c"], bm25=["c", "a"])
    ranked(index, ["q", "q two"])
    assert index.hybrid_calls == ["q"]
    assert [c[:2] for c in index.calls] == [("bm25", "q two")]


def test_hybrid_search_gives_the_same_lists_as_the_two_searches():
    kwargs = {"vector": ["b", "a", "c"], "bm25": ["c", "a"]}
    plain, _ = ranked(FakeIndex("docs", ROWS, **kwargs), ["q"], domain="ios")
    hybrid, _ = ranked(HybridFakeIndex("docs", ROWS, **kwargs), ["q"], domain="ios")
    assert hybrid == plain


def test_a_failing_hybrid_search_falls_back_to_the_two_searches_with_a_note():
    index = HybridFakeIndex("docs", ROWS, fail=True)
    lists, trace = ranked(index, ["q"])
    assert {signal for signal, _ in lists} == {"vector", "bm25"}
    assert {c[0] for c in index.calls} == {"vector", "bm25"}
    assert any("one-round-trip search failed" in n for n in trace.notes)
    assert not trace.degraded


def test_a_single_signal_mode_does_not_use_hybrid_search():
    index = HybridFakeIndex("docs", ROWS)
    ranked(index, ["q"], mode="bm25")
    assert index.hybrid_calls == [] and [c[0] for c in index.calls] == ["bm25"]
