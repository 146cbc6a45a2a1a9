"""CoRAG: the follow-up loop's limits and stopping rules, the LLM judge (and its parsing and
failure), and the deterministic judge's uncovered terms."""

from __future__ import annotations

import json

from query.retrieval.corag import (
    HOP_SLOTS,
    KEEP_FIRST,
    Bridge,
    aspects,
    covered,
    judge_deterministically,
    parse_judgment,
    run_corag,
)
from query.retrieval.expansion import expand_query
from query.retrieval.llm import ChatClient, LLMUnavailable
from query.retrieval.pipeline import answer
from query.types import Candidate, QueryRequest
from tests.support.fake_services import chat_server, scripted_llm
from tests.support.query import FakeIndex, fake_engine, row

QUESTION = "How do I sync a SwiftData model with CloudKit?"


def cand(chunk_id: str, text: str = "", index: str = "docs") -> Candidate:
    return Candidate(chunk_id, index, row={"chunk_id": chunk_id, "content": text or chunk_id})


class Corpus:
    """retrieve(q): a fresh chunk per call (so every hop finds something new), or fixed
    results per query; records the queries."""

    def __init__(self, results: dict[str, list[Candidate]] | None = None) -> None:
        self.results = results
        self.queries: list[str] = []

    def __call__(self, query: str) -> list[Candidate]:
        self.queries.append(query)
        if self.results is None:
            return [cand(f"new-{len(self.queries)}", f"text about {query}")]
        return self.results.get(query, [])


class JudgeLLM:
    """Answers every sufficiency prompt from a list of replies (the last one repeated)."""

    def __init__(self, *replies: str | dict | Exception) -> None:
        self.replies = list(replies)
        self.calls = 0

    def complete(self, messages: list[dict]) -> str:
        reply = self.replies[min(self.calls, len(self.replies) - 1)]
        self.calls += 1
        if isinstance(reply, Exception):
            raise reply
        return reply if isinstance(reply, str) else json.dumps(reply)


def insufficient(n: int) -> dict:
    return {"sufficient": False, "follow_up": f"follow-up {n}"}


FIRST = [cand("a", "Define a model with @Model in SwiftData.")]


# Loop limits and stopping rules


def test_max_hops_is_respected():
    llm = JudgeLLM(*(insufficient(n) for n in range(10)))
    _, hops, notes = run_corag(QUESTION, Corpus(), llm=llm, max_hops=3, first=FIRST)
    assert [h.query for h in hops] == ["follow-up 0", "follow-up 1", "follow-up 2"]
    assert notes[-1] == "CoRAG stopped after 3 hop(s): hop limit of 3 reached"


def test_zero_max_hops_runs_no_hop():
    corpus = Corpus()
    gathered, hops, _ = run_corag(
        QUESTION, corpus, llm=JudgeLLM(insufficient(0)), max_hops=0, first=FIRST
    )
    assert hops == [] and corpus.queries == [] and gathered == FIRST


def test_the_loop_stops_when_the_llm_judges_the_context_sufficient():
    llm = JudgeLLM(insufficient(0), {"sufficient": True, "follow_up": ""})
    _, hops, notes = run_corag(QUESTION, Corpus(), llm=llm, max_hops=5, first=FIRST)
    assert len(hops) == 1 and llm.calls == 2
    assert "context judged sufficient (llm)" in notes[-1]


def test_the_loop_stops_when_a_hop_finds_no_new_chunks():
    corpus = Corpus({"follow-up 0": [cand("a")], "follow-up 1": [cand("b")]})
    llm = JudgeLLM(insufficient(0), insufficient(1))
    _, hops, notes = run_corag(QUESTION, corpus, llm=llm, max_hops=5, first=FIRST)
    assert [(h.query, h.new_chunk_ids) for h in hops] == [("follow-up 0", [])]
    assert notes[-1].endswith("found no new chunks")


def test_the_loop_stops_when_a_follow_up_repeats():
    llm = JudgeLLM(insufficient(0), insufficient(0))
    _, hops, notes = run_corag(QUESTION, Corpus(), llm=llm, max_hops=5, first=FIRST)
    assert len(hops) == 1
    assert "repeats an earlier query" in notes[-1]


def test_a_follow_up_equal_to_the_question_is_a_repeat():
    llm = JudgeLLM({"sufficient": False, "follow_up": QUESTION.upper()})
    corpus = Corpus()
    _, hops, _ = run_corag(QUESTION, corpus, llm=llm, max_hops=3, first=FIRST)
    assert hops == [] and corpus.queries == []


def test_new_chunks_accumulate_once_each_by_index_and_id():
    corpus = Corpus(
        {
            "follow-up 0": [cand("a"), cand("b"), cand("a", index="other")],
            "follow-up 1": [cand("b"), cand("c")],
        }
    )
    llm = JudgeLLM(insufficient(0), insufficient(1), {"sufficient": True})
    gathered, hops, _ = run_corag(QUESTION, corpus, llm=llm, max_hops=5, first=FIRST)
    assert [c.key for c in gathered] == [
        ("docs", "a"),
        ("docs", "b"),
        ("other", "a"),
        ("docs", "c"),
    ]
    assert [h.new_chunk_ids for h in hops] == [["b", "a"], ["c"]]


def ranked(*ids: str) -> list[Candidate]:
    return [
        Candidate(c, "docs", score=1.0 - i / 100, row={"content": c}) for i, c in enumerate(ids)
    ]


def test_an_llm_follow_ups_best_chunks_and_their_links_take_reserved_places():
    first = ranked(*(f"f{i}" for i in range(8)))
    corpus = Corpus({"follow-up 0": ranked("n0", "n1", "n2", "n3")})
    llm = JudgeLLM(insufficient(0), {"sufficient": True})

    def links(sources):
        ids = [c.chunk_id for c in sources]
        if ids == ["n0", "n1"]:
            return [Bridge(Candidate("def", "docs", score=3.0), "TripStore", "n1")]
        return []

    gathered, hops, _ = run_corag(QUESTION, corpus, llm=llm, max_hops=3, first=first, bridges=links)

    ids = [c.chunk_id for c in gathered]
    assert ids[: KEEP_FIRST + HOP_SLOTS + 1] == [*(f"f{i}" for i in range(5)), "n0", "n1", "def"]
    assert ids[-2:] == ["n2", "n3"]
    assert [c.score for c in gathered[: KEEP_FIRST + 3]] == sorted(
        (c.score for c in gathered[: KEEP_FIRST + 3]), reverse=True
    )
    assert hops[0].links == [
        {"chunk_id": "def", "name": "TripStore", "mentioned_by": "n1", "relation": "names"}
    ]


def test_a_deterministic_follow_up_goes_below_everything():
    first = ranked(*(f"f{i}" for i in range(8)))
    gathered, hops, _ = run_corag(QUESTION, Corpus(), llm=None, max_hops=1, first=first)
    assert len(hops) == 1 and [c.chunk_id for c in gathered] == [c.chunk_id for c in first] + [
        "new-1"
    ]


def test_each_hop_records_the_llms_reason():
    llm = JudgeLLM({"sufficient": False, "follow_up": "CloudKit sync", "reason": "no sync docs"})
    _, hops, _ = run_corag(QUESTION, Corpus(), llm=llm, max_hops=1, first=FIRST)
    assert hops[0].reason == "no sync docs"


# The LLM judge's replies


def test_a_fenced_judgment_in_prose_is_parsed():
    reply = 'Thinking... ```json\n{"sufficient": false, "follow_up": "CKSyncEngine"}\n``` done'
    assert parse_judgment(reply) == (False, "CKSyncEngine", "llm")


def test_yes_and_no_strings_count_as_booleans():
    assert parse_judgment('{"sufficient": "yes"}')[0] is True
    assert parse_judgment('{"sufficient": "No", "follow_up": "x"}')[0] is False


def test_a_reply_without_a_sufficient_field_is_unreadable():
    assert parse_judgment('{"answer": "SwiftData syncs via CloudKit"}') is None
    assert parse_judgment("Yes, it is sufficient.") is None


def test_an_unreadable_judgment_hands_over_to_the_deterministic_judge():
    llm = JudgeLLM("I think the context is fine?")
    _, hops, notes = run_corag(QUESTION, Corpus(), llm=llm, max_hops=2, first=FIRST)
    assert notes[0].startswith("degraded: CoRAG LLM JudgeLLM failed (unreadable")
    assert hops and hops[0].query == "CloudKit sync"  # the terms FIRST does not mention
    assert llm.calls == 1  # not asked again after failing


def test_an_llm_that_times_out_hands_over_to_the_deterministic_judge():
    with chat_server('{"sufficient": true}', delay_s=2.0) as server:
        llm = ChatClient(server.url, "m", 0.3)
        _, hops, notes = run_corag(QUESTION, Corpus(), llm=llm, max_hops=2, first=FIRST)
    assert "did not answer within 0.3s" in notes[0]
    assert hops[0].query == "CloudKit sync"


def test_an_llm_exception_is_a_degraded_note_not_a_crash():
    llm = JudgeLLM(LLMUnavailable("HTTP 503: overloaded"))
    _, _, notes = run_corag(QUESTION, Corpus(), llm=llm, max_hops=1, first=FIRST)
    assert notes[0].startswith("degraded: ") and "HTTP 503: overloaded" in notes[0]


def test_the_judge_sees_the_question_and_the_gathered_context():
    seen = []

    def reply(messages):
        seen.append(messages[-1]["content"])
        return '{"sufficient": true}'

    with chat_server(reply) as server:
        run_corag(QUESTION, Corpus(), llm=ChatClient(server.url, "m", 5.0), max_hops=1, first=FIRST)
    assert QUESTION in seen[0] and "Define a model with @Model in SwiftData." in seen[0]


def test_the_judge_sees_what_the_last_hop_brought():
    prompts = []

    def reply(messages):
        prompts.append(messages[-1]["content"])
        return json.dumps(insufficient(len(prompts)))

    first = [cand(f"c{i}", f"first retrieval chunk {i}") for i in range(12)]
    corpus = Corpus({"follow-up 1": [cand("hop", "CKSyncEngine shares records")]})
    with chat_server(reply) as server:
        llm = ChatClient(server.url, "m", 5.0)
        run_corag(QUESTION, corpus, llm=llm, max_hops=2, first=first)
    assert "CKSyncEngine shares records" in prompts[1]
    assert "first retrieval chunk 0" in prompts[1]


# The deterministic judge


def test_aspects_are_quoted_strings_entities_identifiers_then_words():
    question = 'Why does "merge policy" fail in Core Data with NSPersistentCloudKitContainer sync?'
    assert aspects(question) == [
        "merge policy",
        "Core Data",
        "NSPersistentCloudKitContainer",
        "fail",
        "sync",
    ]


def test_a_sentence_opening_word_is_not_part_of_an_entity():
    assert aspects("How Swift Concurrency works") == ["Swift Concurrency"]


def test_coverage_matches_words_by_stem_and_phrases_whole():
    assert covered("models", "Define a model.") and covered("syncing", "sync data")
    assert covered("Core Data", "the core  data stack")
    assert not covered("Core Data", "core ML data")


def test_uncovered_terms_become_the_follow_up():
    sufficient, follow_up, reason = judge_deterministically(QUESTION, FIRST, set())
    assert (sufficient, follow_up) == (False, "CloudKit sync")
    assert reason == "not yet covered: CloudKit, sync"


def test_a_covered_question_is_sufficient():
    context = [cand("a", "Sync your SwiftData model with CloudKit by enabling iCloud.")]
    assert judge_deterministically(QUESTION, context, set())[0] is True


def test_without_an_llm_the_loop_stops_once_everything_is_covered():
    corpus = Corpus({"CloudKit sync": [cand("b", "CloudKit sync of a ModelContainer")]})
    gathered, hops, notes = run_corag(QUESTION, corpus, llm=None, max_hops=3, first=FIRST)
    assert [(h.query, h.new_chunk_ids) for h in hops] == [("CloudKit sync", ["b"])]
    assert [c.chunk_id for c in gathered] == ["a", "b"]
    assert "every term of the question appears" in notes[-1]


def test_without_an_llm_a_term_searched_in_vain_is_not_searched_again():
    corpus = Corpus({"CloudKit sync": [cand("b", "sync engines in general")]})
    _, hops, notes = run_corag(QUESTION, corpus, llm=None, max_hops=3, first=FIRST)
    assert len(hops) == 1
    assert "already searched for CloudKit" in notes[-1]


def test_only_the_top_chunks_of_the_first_retrieval_count_as_coverage():
    """A term somewhere deep in 50 fused candidates has not really been retrieved."""
    first = [cand(f"c{i}", "SwiftData model") for i in range(10)]
    first.append(cand("deep", "sync with CloudKit"))
    assert judge_deterministically(QUESTION, first[:10], set())[1] == "CloudKit sync"
    corpus = Corpus()
    _, hops, _ = run_corag(QUESTION, corpus, llm=None, max_hops=1, first=first)
    assert corpus.queries == ["CloudKit sync"]


# In the pipeline


def test_the_response_traces_each_hop_through_a_real_chat_endpoint():
    rows = [row("a", "SwiftData model"), row("b", "ModelContainer"), row("c", "CKSyncEngine")]
    index = FakeIndex("docs", rows, vector=["a", "b"], bm25=["a", "b"])
    index.bm25_by_text = {"CKSyncEngine sharing": ["c"]}
    reply = scripted_llm(
        ["SwiftData @Model", "ModelContainer"],
        [
            {"sufficient": False, "follow_up": "CKSyncEngine sharing", "reason": "no sync"},
            {"sufficient": True},
        ],
    )
    with chat_server(reply) as server:
        engine = fake_engine(index, llm=ChatClient(server.url, "m", 5.0), expander=expand_query)
        response = answer(QueryRequest(query=QUESTION, corag=True), engine)
    assert response.query_expansions == [QUESTION, "SwiftData @Model", "ModelContainer"]
    assert response.corag_trace == [
        {"hop": 1, "query": "CKSyncEngine sharing", "new_chunk_ids": ["c"], "reason": "no sync"}
    ]
    assert "c" in [chunk["chunk_id"] for chunk in response.chunks]
