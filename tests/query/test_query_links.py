"""Links without a model: title mentions, and CoRAG's bridge hop that follows them."""

from __future__ import annotations

from core.store.contract import Declaration
from query.retrieval.corag import KEEP_FIRST, Bridge, bridge_hop
from query.retrieval.links import MAX_DECLARING_DOCS, Links
from query.retrieval.pipeline import answer
from query.types import Candidate, QueryRequest
from tests.support.query import FakeIndex, fake_engine, row


def links(*titles: str) -> Links:
    return Links((title, f"{title}-0") for title in titles)


# Title mentions


def test_a_title_is_found_as_a_whole_word_and_case_sensitively():
    found = links("Paris", "Christopher Nolan")
    text = "In Paris, Christopher Nolan filmed; a comparison of parisian christopher nolan fans."
    assert found.mentioned(text) == ["Paris", "Christopher Nolan"]


def test_the_longest_title_at_a_position_wins():
    assert links("New York", "New York City").mentioned("born in New York City") == [
        "New York City"
    ]


def test_short_titles_link_nothing():
    assert links("Go").mentioned("Go is a language") == []


def test_a_title_leads_to_the_first_chunks_of_its_documents():
    found = Links([("Dune", "d-0"), ("Dune", "e-0")])
    assert found.chunks_of("Dune") == ["d-0", "e-0"] and found.chunks_of("Nope") == []


# The bridge hop's merge


def cands(*ids: str) -> list[Candidate]:
    return [Candidate(c, "docs", score=1.0 - i / 100) for i, c in enumerate(ids)]


def test_bridges_take_the_places_right_below_the_top_first_round_chunks():
    first = cands(*(f"f{i}" for i in range(8)))
    bridge = Bridge(Candidate("b", "docs", score=5.0), "Dune", "f0")

    merged, hop = bridge_hop(first, lambda _: [bridge])

    assert [c.chunk_id for c in merged][: KEEP_FIRST + 1] == [*(f"f{i}" for i in range(5)), "b"]
    assert merged[KEEP_FIRST].score < merged[KEEP_FIRST - 1].score
    assert hop is not None and hop.links == [
        {"chunk_id": "b", "name": "Dune", "mentioned_by": "f0", "relation": "names"}
    ]


def test_a_linked_chunk_found_lower_down_moves_up_once():
    first = cands(*(f"f{i}" for i in range(8)))
    merged, _ = bridge_hop(first, lambda _: [Bridge(first[7], "Dune", "f1")])
    ids = [c.chunk_id for c in merged]
    assert ids.index("f7") == KEEP_FIRST and ids.count("f7") == 1 and len(ids) == 8


def test_a_link_to_a_top_chunk_changes_nothing():
    first = cands("f0", "f1", "f2")
    merged, hop = bridge_hop(first, lambda _: [Bridge(first[1], "Dune", "f0")])
    assert merged == first and hop is None


# Through the pipeline


def test_corag_follows_a_title_mention_into_the_top_results():
    rows = [row(f"f{i}", f"filler {i}", title=f"Filler {i}") for i in range(12)]
    rows[0] = row("f0", "The film was directed by Christopher Nolan.", title="Inception")
    rows.append(row("nolan", "A British-American filmmaker.", title="Christopher Nolan"))
    order = [r["chunk_id"] for r in rows[:-1]] + ["nolan"]
    engine = fake_engine(FakeIndex("docs", rows, vector=order, bm25=order))

    response = answer(
        QueryRequest(query="who directed Inception", corag=True, rerank=False, expand=False),
        engine,
    )

    ids = [c["chunk_id"] for c in response.chunks]
    assert ids.index("nolan") == KEEP_FIRST
    bridge_hop_trace = response.corag_trace[0]
    assert bridge_hop_trace["links"] == [
        {
            "chunk_id": "nolan",
            "name": "Christopher Nolan",
            "mentioned_by": "f0",
            "relation": "names",
        }
    ]


def nolan_engine():
    rows = [row(f"f{i}", f"filler {i}", title=f"Filler {i}") for i in range(12)]
    rows[0] = row("f0", "The film was directed by Christopher Nolan.", title="Inception")
    rows.append(row("nolan", "A British-American filmmaker.", title="Christopher Nolan"))
    order = [r["chunk_id"] for r in rows]
    return fake_engine(FakeIndex("docs", rows, vector=order, bm25=order))


def test_by_default_a_linked_chunk_takes_a_place_below_the_top_results_and_says_why():
    response = answer(QueryRequest(query="who directed Inception", rerank=False), nolan_engine())
    ids = [c["chunk_id"] for c in response.chunks]
    assert ids.index("nolan") == KEEP_FIRST and response.corag_trace is None
    assert response.chunks[KEEP_FIRST]["linked_from"] == {
        "name": "Christopher Nolan",
        "chunk_id": "f0",
        "relation": "names",
    }
    assert response.chunks[0]["linked_from"] is None
    assert any(n.startswith("links: 1 chunk(s)") for n in response.notes)


def test_with_links_off_nothing_is_linked():
    request = QueryRequest(query="who directed Inception", rerank=False, links=False, top_k=20)
    response = answer(request, nolan_engine())
    assert [c["chunk_id"] for c in response.chunks][-1] == "nolan"
    assert all(c["linked_from"] is None for c in response.chunks)


def declared(symbol: str, kind: str = "function", doc: str = "", chunk: str = "") -> Declaration:
    return Declaration(symbol, kind, doc or f"doc-{symbol}", chunk or f"{symbol}-0")


def test_a_declared_identifier_links_to_its_declaration_and_a_plain_word_does_not():
    found = Links(
        [],
        [
            declared("TripStore", "class", chunk="s-0"),
            declared("TripRepository.save_all", "method", chunk="s-1"),
            declared("paste", chunk="p"),
        ],
    )
    text = "let store = TripStore(); store.save_all(); paste()"
    assert found.mentioned(text) == ["TripStore", "save_all"]
    assert found.chunks_of("save_all") == ["s-1"] and found.chunks_of("paste") == []


def test_a_type_is_named_by_its_single_word_name_and_a_function_is_not():
    found = Links([], [declared("Trip", "struct"), declared("Fetch", "function")])
    assert found.mentioned("let trip = Trip(); Fetch()") == ["Trip"]


def test_an_extension_is_not_a_target_for_its_types_name():
    found = Links([], [declared("Trip", "struct", chunk="t"), declared("Trip", "extension")])
    assert found.chunks_of("Trip") == ["t"]


def test_a_name_declared_in_too_many_documents_links_nothing():
    repos = [declared("Config", "class", doc=f"repo-{i}") for i in range(MAX_DECLARING_DOCS + 1)]
    assert Links([], repos).mentioned("Config()") == []
    assert Links([], repos[:MAX_DECLARING_DOCS]).mentioned("Config()") == ["Config"]


def test_corag_links_a_swift_extension_to_the_declaration_of_its_type():
    engine = swift_extension_engine()

    response = answer(
        QueryRequest(query="how many nights", corag=True, rerank=False, expand=False), engine
    )

    ids = [c["chunk_id"] for c in response.chunks]
    assert ids.index("decl") == KEEP_FIRST
    assert response.corag_trace[0]["links"] == [
        {"chunk_id": "decl", "name": "Trip", "mentioned_by": "ext", "relation": "names"}
    ]


def test_without_declarations_only_titles_are_mentioned_and_followed():
    found = Links([("Trip Planning", "guide-0")], [declared("TripStore", "class", chunk="s-0")])
    text = "See Trip Planning: let store = TripStore()"
    assert found.mentioned(text, declarations=False) == ["Trip Planning"]
    assert found.chunks_of("TripStore", declarations=False) == []
    assert found.chunks_of("Trip Planning", declarations=False) == ["guide-0"]


def swift_extension_engine():
    rows = [row(f"f{i}", f"filler {i}") for i in range(12)]
    rows[0] = row(
        "ext",
        "extension Trip {\n    var nights: Int { days - 1 }\n}",
        symbol="Trip",
        kind="extension",
        doc_id="TripNights.swift",
    )
    rows.append(
        row(
            "decl",
            "struct Trip { let days: Int }",
            symbol="Trip",
            kind="struct",
            doc_id="Trip.swift",
        )
    )
    order = [r["chunk_id"] for r in rows]
    return fake_engine(FakeIndex("code", rows, vector=order, bm25=order))


def test_link_places_do_not_follow_the_identifiers_a_top_chunk_uses():
    # A code chunk uses dozens of declared names; their declarations took the places of
    # answers on every code set measured. Only CoRAG's bridge hop follows them.
    response = answer(
        QueryRequest(query="how many nights", rerank=False, expand=False, top_k=20),
        swift_extension_engine(),
    )
    assert all(c["linked_from"] is None for c in response.chunks)
    assert [c["chunk_id"] for c in response.chunks][-1] == "decl"
