"""The terminal form of a response: one block per chunk, facts, a snippet, a footer."""

from __future__ import annotations

from query.cli.render import render


def chunk(**fields) -> dict:
    base = {
        "chunk_id": "c1",
        "content": "line one\n\nline two\nline three\nline four\nline five\nline six",
        "context": "NavigationView > Overview",
        "source": "apple_docs",
        "path": "documentation/swiftui/navigationview",
        "index": "docs",
        "symbol": None,
        "ios_version_min": "13.0",
        "ios_version_max": None,
        "swift_version": None,
        "framework_tags": ["SwiftUI"],
        "deprecated": True,
        "deprecated_in": "16.0",
        "score": 0.03125,
        "ranks": {"vector": 1, "bm25": None, "rerank": None},
        "start_line": 3,
        "end_line": 9,
    }
    base.update(fields)
    return base


def response(*chunks: dict, **fields) -> dict:
    return {
        "chunks": list(chunks),
        "total_tokens": 42,
        "query_expansions": ["q"],
        "corag_trace": None,
        "timings_ms": {"total": 12.3},
        "notes": [],
        **fields,
    }


def test_no_chunks_reads_no_results():
    assert render(response()) == "no results"


def test_a_chunk_shows_rank_score_place_context_and_where_it_comes_from():
    first_line = render(response(chunk())).splitlines()[0]
    assert first_line == (
        "1. 0.0312  documentation/swiftui/navigationview:3-9 § NavigationView > Overview"
        "  [docs · apple_docs]"
    )


def test_a_symbol_is_preferred_over_the_context():
    assert "§ TripStore.save" in render(response(chunk(symbol="TripStore.save")))


def test_versions_frameworks_deprecation_and_ranks_are_one_line():
    facts = render(response(chunk())).splitlines()[1].strip()
    assert facts == "iOS 13.0+ · SwiftUI · DEPRECATED in iOS 16.0 · ranks vector #1"


def test_the_snippet_is_the_first_non_blank_lines():
    text = render(response(chunk()))
    assert "│ line one\n   │ line two" in text and "… (2 more lines)" in text


def test_the_footer_counts_chunks_tokens_and_time_and_lists_expansions():
    text = render(response(chunk(), query_expansions=["q", "q2"]))
    assert text.endswith("1 chunk(s), 42 tokens, 12 ms\nsearched: q | q2")


def test_a_link_hop_lists_the_names_it_followed():
    hop = {
        "hop": 1,
        "query": "links from the first results",
        "new_chunk_ids": ["b", "c"],
        "reason": "2 chunk(s) named by the top chunks",
        "links": [
            {"chunk_id": "b", "name": "TripStore", "mentioned_by": "a"},
            {"chunk_id": "c", "name": "TripStore", "mentioned_by": "a"},
        ],
    }
    text = render(response(chunk(), corag_trace=[hop]))
    assert "hop 1: links from the first results (+2;" in text
    assert "\n  linked: TripStore" in text


def test_a_linked_chunk_names_the_result_that_named_it():
    linked = chunk(chunk_id="c2", linked_from={"name": "TripStore", "chunk_id": "c1"})
    facts = render(response(chunk(), linked)).split("\n\n")[1].splitlines()[1]
    assert facts.endswith("ranks vector #1 · linked: TripStore named by #1")


def test_a_caller_placed_by_a_link_names_what_it_calls_and_where_that_is_declared():
    link = {"name": "register", "chunk_id": "c1", "relation": "calls"}
    linked = chunk(chunk_id="c2", linked_from=link)
    facts = render(response(chunk(), linked)).split("\n\n")[1].splitlines()[1]
    assert facts.endswith("linked: calls register, declared in #1")
