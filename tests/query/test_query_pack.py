"""Packing: token counts of what is shown, top-k first, then drop from the bottom to fit."""

from __future__ import annotations

from query.retrieval.pack import chunk_json, pack, shown_text
from query.types import Candidate
from tests.support.query import WordCounter, row


def cands(*word_counts: int) -> list[Candidate]:
    """Candidates whose content has the given number of words (no context)."""
    return [
        Candidate(f"c{i}", "docs", row=row(f"c{i}", " ".join(["w"] * n)))
        for i, n in enumerate(word_counts)
    ]


def ids(packed) -> list[str]:
    return [c.chunk_id for c in packed.candidates]


def test_a_chunk_is_shown_and_counted_as_context_newline_content():
    assert shown_text({"context": "Trip > save()", "content": "body"}) == "Trip > save()\nbody"
    assert shown_text({"context": "", "content": "body"}) == "body"
    packed = pack(
        [Candidate("a", "i", row=row("a", "one two", context="ctx words"))],
        WordCounter(),
        top_k=10,
        max_tokens=None,
    )
    assert packed.token_counts == [4]


def stored(count: int, index: str = "docs") -> Candidate:
    # The stored count (99) deliberately disagrees with the content's words (2).
    return Candidate(
        "a", index, row={**row("a", "one two", context="ctx words"), "token_count": count}
    )


def test_a_stored_content_count_the_index_vouches_for_is_added_to_the_contexts_count():
    packed = pack(
        [stored(99)], WordCounter(), top_k=10, max_tokens=None, stored_usable=lambda i: True
    )
    assert packed.token_counts == [99 + 2]


def test_stored_counts_of_an_index_that_does_not_vouch_for_them_are_ignored():
    packed = pack(
        [stored(99)], WordCounter(), top_k=10, max_tokens=None, stored_usable=lambda i: False
    )
    assert packed.token_counts == [4]


def test_total_tokens_is_the_exact_sum_of_the_returned_chunks():
    packed = pack(cands(3, 5, 7), WordCounter(), top_k=10, max_tokens=None)
    assert packed.token_counts == [3, 5, 7] and packed.total_tokens == 15


def test_top_k_is_applied_before_the_budget():
    packed = pack(cands(1, 1, 1, 1), WordCounter(), top_k=2, max_tokens=100)
    assert ids(packed) == ["c0", "c1"] and packed.dropped == 0


def test_chunks_are_dropped_from_the_bottom_until_the_total_fits():
    packed = pack(cands(4, 4, 4, 4), WordCounter(), top_k=10, max_tokens=9)
    assert ids(packed) == ["c0", "c1"]
    assert packed.total_tokens == 8 and packed.dropped == 2
    assert packed.notes == ["2 lower-ranked chunk(s) dropped to fit --max-tokens 9"]


def test_a_budget_met_exactly_keeps_everything():
    packed = pack(cands(4, 5), WordCounter(), top_k=10, max_tokens=9)
    assert ids(packed) == ["c0", "c1"] and packed.notes == []


def test_a_later_smaller_chunk_never_jumps_over_a_dropped_one():
    packed = pack(cands(5, 10, 1), WordCounter(), top_k=10, max_tokens=7)
    assert ids(packed) == ["c0"]


def test_a_top_chunk_over_budget_returns_nothing_and_says_so():
    packed = pack(cands(20, 1), WordCounter(), top_k=10, max_tokens=5)
    assert packed.candidates == [] and packed.total_tokens == 0
    assert "the top chunk alone has 20 tokens" in packed.notes[0]


def test_chunk_json_names_every_field_of_the_output():
    cand = Candidate("a", "docs", row=row("a", "text", framework_tags=["SwiftUI"]), score=0.5)
    cand.ranks.update(vector=2, bm25=None)
    out = chunk_json(cand, 7)
    assert set(out) == {
        "chunk_id", "doc_id", "content", "context", "source", "path", "index", "domain", "chunk_type",
        "symbol", "ios_version_min", "ios_version_max", "swift_version", "framework_tags",
        "deprecated", "deprecated_in", "score", "ranks", "signals", "linked_from", "start_line",
            "end_line",
        "title", "url", "token_count",
    }  # fmt: skip
    assert out["ranks"] == {"vector": 2, "bm25": None, "rerank": None}
    assert out["signals"] == {"vector": {"rank": 2, "score": None, "contribution": None}}
    assert (out["index"], out["token_count"], out["score"]) == ("docs", 7, 0.5)
