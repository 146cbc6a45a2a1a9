"""Query expansion: parsing LLM replies, falling back when the LLM fails, and the
deterministic expansions (identifier splitting, framework vocabulary, feedback terms)."""

from __future__ import annotations

import pytest

from query.errors import is_degraded
from query.retrieval.expansion import expand_query
from query.retrieval.expansion.deterministic import deterministic_variants
from query.retrieval.expansion.feedback import feedback_terms
from query.retrieval.expansion.rewrites import parse_rewrites
from query.retrieval.expansion.vocabulary import frameworks_of
from query.retrieval.expansion.words import split_identifiers
from query.retrieval.llm import ChatClient, LLMUnavailable
from query.retrieval.pipeline import answer
from query.types import QueryRequest
from tests.support.fake_services import chat_server, serving
from tests.support.query import FakeIndex, fake_engine, row

QUESTION = "How do I define a SwiftData model?"


class ScriptedLLM:
    def __init__(self, reply: str | Exception) -> None:
        self.reply = reply
        self.messages: list[list[dict]] = []

    def complete(self, messages: list[dict]) -> str:
        self.messages.append(messages)
        if isinstance(self.reply, Exception):
            raise self.reply
        return self.reply


# Parsing LLM replies


def test_a_bare_json_list_is_parsed():
    assert parse_rewrites('["swiftdata @Model", "define model class"]') == [
        "swiftdata @Model",
        "define model class",
    ]


def test_a_fenced_json_block_is_parsed():
    reply = 'Here you go:\n```json\n["SwiftData @Model macro", "ModelContainer schema"]\n```\n'
    assert parse_rewrites(reply) == ["SwiftData @Model macro", "ModelContainer schema"]


def test_json_wrapped_in_prose_is_parsed():
    reply = 'Sure! The queries are ["a one", "a two"]. Let me know [if] you need more.'
    assert parse_rewrites(reply) == ["a one", "a two"]


def test_a_list_inside_a_json_object_is_parsed():
    assert parse_rewrites('{"queries": ["x y", "z w"], "note": "n"}') == ["x y", "z w"]


def test_a_list_of_objects_with_query_fields_is_parsed():
    assert parse_rewrites('[{"query": "first q"}, {"query": "second q"}]') == [
        "first q",
        "second q",
    ]


def test_a_numbered_list_is_parsed_when_there_is_no_json():
    reply = 'Rewrites:\n1. "SwiftData model macro"\n2) ModelContainer setup\n- @Model class'
    assert parse_rewrites(reply) == [
        "SwiftData model macro",
        "ModelContainer setup",
        "@Model class",
    ]


@pytest.mark.parametrize(
    "reply", ["I'm sorry, I can't help with that.", "", "{not json", '{"answer": 42}', "[1, 2]"]
)
def test_garbage_yields_no_rewrites(reply):
    assert parse_rewrites(reply) == []


def test_rewrites_are_trimmed_deduplicated_and_capped_in_length():
    reply = '["  spaced   out  ", "Spaced out", "' + "x" * 400 + '", "kept"]'
    assert parse_rewrites(reply) == ["spaced out", "kept"]


# The LLM path


def test_with_an_llm_the_original_comes_first_then_its_rewrites():
    llm = ScriptedLLM(
        '["SwiftData @Model macro", "define persistent model class", "ModelContainer"]'
    )
    expansion = expand_query(QUESTION, llm=llm)
    assert expansion.method == "llm"
    assert expansion.variants == [
        QUESTION,
        "SwiftData @Model macro",
        "define persistent model class",
        "ModelContainer",
    ]


def test_llm_variants_are_capped_at_max_variants():
    llm = ScriptedLLM('["a1 b", "a2 b", "a3 b", "a4 b", "a5 b", "a6 b"]')
    assert len(expand_query(QUESTION, llm=llm, max_variants=4).variants) == 4


def test_a_rewrite_repeating_the_original_is_dropped():
    llm = ScriptedLLM(f'["{QUESTION.lower()}", "one", "two"]')
    assert expand_query(QUESTION, llm=llm).variants == [QUESTION, "one", "two"]


def test_the_prompt_carries_domain_frameworks_and_question():
    llm = ScriptedLLM('["a b", "c d"]')
    expand_query(QUESTION, llm=llm, domain="ios", frameworks=("SwiftData",), max_variants=5)
    prompt = llm.messages[0][-1]["content"]
    assert "Domain: ios" in prompt and "Frameworks: SwiftData" in prompt
    assert QUESTION in prompt and "Write 4 " in prompt


def test_too_few_llm_rewrites_are_topped_up_deterministically():
    expansion = expand_query(QUESTION, llm=ScriptedLLM('["SwiftData @Model"]'))
    assert expansion.method == "llm+deterministic"
    assert expansion.variants[:2] == [QUESTION, "SwiftData @Model"]
    assert len(expansion.variants) >= 3


def test_a_garbage_reply_falls_back_to_deterministic_with_a_degraded_note():
    expansion = expand_query(QUESTION, llm=ScriptedLLM("As an AI model I cannot."))
    assert expansion.method.startswith("deterministic (llm failed: reply held no rewrites")
    assert expansion.variants[0] == QUESTION and len(expansion.variants) >= 2
    assert expansion.notes[0].startswith("degraded: query expansion LLM")


def test_an_llm_exception_falls_back_to_deterministic():
    expansion = expand_query(QUESTION, llm=ScriptedLLM(LLMUnavailable("HTTP 503: busy")))
    assert expansion.method == "deterministic (llm failed: HTTP 503: busy)"
    assert expansion.variants == deterministic_variants(QUESTION)[0]


def test_an_llm_slower_than_its_timeout_falls_back_to_deterministic_in_time():
    with chat_server('["too late"]', delay_s=2.0) as server:
        expansion = expand_query(QUESTION, llm=ChatClient(server.url, "m", 0.3))
    assert expansion.method.startswith("deterministic (llm failed:")
    assert "did not answer within 0.3s" in expansion.method
    assert "too late" not in expansion.variants


def test_a_real_chat_endpoint_reply_in_a_fence_is_used():
    reply = 'Here:\n```json\n["SwiftData @Model macro", "ModelContainer ModelContext"]\n```'
    with chat_server(reply) as server:
        expansion = expand_query(QUESTION, llm=ChatClient(server.url, "m", 5.0))
    assert expansion.method == "llm"
    assert expansion.variants == [QUESTION, "SwiftData @Model macro", "ModelContainer ModelContext"]


def test_without_an_llm_the_note_says_none_is_configured():
    expansion = expand_query(QUESTION, llm=None)
    assert expansion.method == "deterministic"
    assert expansion.notes[0].startswith("no LLM configured (OPENCLAW_LLM_ENDPOINT unset)")


# Deterministic expansion


def test_identifiers_are_split_into_words():
    assert split_identifiers("push a NavigationStack via fetch_all_items") == (
        "push a navigation stack via fetch all items"
    )


def test_acronyms_and_attributes_are_split():
    assert split_identifiers("URLSession and @MainActor") == "url session and main actor"


def test_framework_names_are_not_split():
    assert split_identifiers("SwiftData with CloudKit") == "SwiftData with CloudKit"


def test_a_named_framework_brings_its_api_vocabulary():
    variants, parts = deterministic_variants(QUESTION)
    vocab = next(v for v in variants if "ModelContainer" in v)
    assert "@Model" in vocab and "ModelContext" in vocab
    assert parts[0] == "framework vocabulary (SwiftData)"


def test_a_framework_symbol_implies_its_framework():
    assert frameworks_of("when does ModelContext save?", ()) == ["SwiftData"]


def test_a_lowercase_or_spelled_out_framework_name_counts():
    assert frameworks_of("sync core data with cloudkit", ()) == ["CoreData", "CloudKit"]


def test_requested_frameworks_come_first():
    assert frameworks_of("persist with SwiftData", ("cloudkit",)) == ["CloudKit", "SwiftData"]


def test_apple_vocabulary_is_not_added_to_a_python_question():
    variants, _ = deterministic_variants("combine two lists in Python", domain="python")
    assert not any("Publisher" in v for v in variants)


def test_feedback_terms_are_shared_by_the_top_hits_and_new_to_the_question():
    docs = [
        "Annotate the class with @Model. A ModelContainer stores Trip objects.",
        "Create the ModelContainer for Trip at launch.",
        "Each Trip has a destination; the schema evolves with migrations.",
    ]
    terms = feedback_terms(docs, exclude="How do I store a trip?")
    assert terms[0] == "ModelContainer"
    assert "Trip" not in terms and "trip" not in terms  # the question has it
    assert "the" not in terms and "class" not in terms


def test_a_term_found_in_only_one_of_several_hits_is_not_feedback():
    docs = ["zebra unicorn alpha", "alpha beta", "alpha gamma"]
    assert feedback_terms(docs) == ["alpha"]


def test_feedback_terms_make_their_own_variant():
    docs = ["ModelContainer schema", "ModelContainer migration plan"]
    variants, parts = deterministic_variants("store trips", feedback_texts=docs)
    assert "store trips ModelContainer" in variants
    assert "feedback terms from 2 BM25 hit(s)" in parts


def test_deterministic_expansion_keeps_the_original_first_and_at_most_the_limit():
    docs = ["ModelContainer schema", "ModelContainer migration plan"]
    variants, _ = deterministic_variants(
        "How do I persist a NavigationStack path with SwiftData?", feedback_texts=docs, limit=3
    )
    assert variants[0] == "How do I persist a NavigationStack path with SwiftData?"
    assert len(variants) == 3


def test_deterministic_expansion_is_deterministic():
    docs = ["alpha beta", "beta alpha gamma"]
    first = deterministic_variants(QUESTION, feedback_texts=docs)
    assert all(deterministic_variants(QUESTION, feedback_texts=docs) == first for _ in range(3))


def test_an_original_longer_than_a_variant_may_be_stays_first():
    long_question = "How do I persist a NavigationStack path? " + "Some context. " * 40
    llm = ScriptedLLM('["NavigationStack path persistence", "NavigationPath Codable"]')
    for expansion in (expand_query(long_question, llm=llm), expand_query(long_question, llm=None)):
        assert expansion.variants[0] == " ".join(long_question.split())


def test_a_question_of_plain_words_without_feedback_gets_only_its_keyword_form():
    variants, parts = deterministic_variants("what is a closure")
    assert variants == ["what is a closure", "closure"] and parts == ["keyword form"]


# In the pipeline


def test_the_pipeline_with_a_down_llm_searches_deterministic_variants_and_says_so():
    with serving({}) as server:
        url = server.url  # closed once the block ends: nothing listens there
    rows = [row("a", "Annotate with @Model"), row("b", "ModelContainer setup")]
    engine = fake_engine(
        FakeIndex("docs", rows), llm=ChatClient(url, "m", 2.0), expander=expand_query
    )
    response = answer(QueryRequest(query=QUESTION), engine)
    assert response.query_expansions[0] == QUESTION
    assert any("@Model ModelContainer" in v for v in response.query_expansions)
    assert is_degraded(response.to_dict())
    assert response.chunks
