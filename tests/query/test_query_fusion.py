"""Fusion: RRF and weighted arithmetic, merging indexes, boosts, demotions and tie-breaking."""

from __future__ import annotations

import pytest

from core.settings import Settings
from query.retrieval.boosts import DEPRECATED_DEMOTION, FRAMEWORK_BOOST, adjust
from query.retrieval.fusion import fuse, merge_indexes
from query.retrieval.pipeline import answer
from query.types import Candidate, QueryRequest
from tests.support.fusion import ranked, scores_of
from tests.support.query import FakeEmbedder, FakeExpansion, FakeIndex, fake_engine, row


def test_rrf_score_is_the_sum_of_one_over_k_plus_rank_over_lists():
    fused = fuse([ranked("vector", ["a", "b", "c"]), ranked("bm25", ["c", "a"])], k=60)
    assert scores_of(fused) == pytest.approx(
        {"a": 1 / 61 + 1 / 62, "b": 1 / 62, "c": 1 / 63 + 1 / 61}, rel=1e-12
    )
    assert [c.chunk_id for c in fused] == ["a", "c", "b"]


def test_rrf_sums_over_query_variants_too():
    fused = fuse([ranked("bm25", ["a"], variant=0), ranked("bm25", ["a"], variant=1)], k=60)
    assert fused[0].score == pytest.approx(2 / 61, rel=1e-12)


def test_rrf_k_is_a_parameter():
    assert fuse([ranked("bm25", ["a"])], k=10)[0].score == pytest.approx(1 / 11, rel=1e-12)


def test_ranks_are_the_best_rank_per_signal_over_variants():
    fused = fuse(
        [
            ranked("vector", ["x", "a"], variant=0),
            ranked("vector", ["a"], variant=1),
            ranked("bm25", ["y", "z", "a"]),
        ]
    )
    a = next(c for c in fused if c.chunk_id == "a")
    assert a.ranks == {"vector": 1, "bm25": 3, "rerank": None}


def test_weighted_fusion_min_max_normalises_each_list_then_weighs_the_signal():
    fused = fuse(
        [
            ranked("vector", ["a", "b", "c"], scores=[0.9, 0.5, 0.1]),
            ranked("bm25", ["c", "a"], scores=[12.0, 2.0]),
        ],
        method="weighted",
        weights={"vector": 0.6, "bm25": 0.4},
    )
    assert scores_of(fused) == pytest.approx({"a": 0.6, "b": 0.3, "c": 0.4}, rel=1e-12)


def test_weighted_fusion_gives_full_weight_when_a_list_has_equal_scores():
    fused = fuse([ranked("bm25", ["a", "b"], scores=[3.0, 3.0])], method="weighted")
    assert scores_of(fused) == pytest.approx({"a": 0.4, "b": 0.4})


def test_a_chunk_found_by_several_lists_is_one_candidate():
    fused = fuse([ranked("vector", ["a", "b"]), ranked("bm25", ["a"])])
    assert sorted(c.chunk_id for c in fused) == ["a", "b"]


def test_the_indexes_of_one_signal_merge_into_one_list_by_score():
    merged = merge_indexes(
        [
            ranked("vector", ["a", "b"], index="one", scores=[0.9, 0.2]),
            ranked("vector", ["x"], index="two", scores=[0.5]),
            ranked("bm25", ["b"], index="one"),
        ]
    )
    assert [(m.signal, [(i, h.chunk_id) for i, h in m.hits]) for m in merged] == [
        ("bm25", [("one", "b")]),
        ("vector", [("one", "a"), ("two", "x"), ("one", "b")]),
    ]


def test_a_weak_index_does_not_get_rank_1_for_its_best_hit():
    merged = merge_indexes(
        [
            ranked("vector", ["a", "b"], index="main", scores=[0.9, 0.8]),
            ranked("vector", ["weak"], index="small", scores=[0.1]),
        ]
    )
    assert scores_of(fuse(merged, k=60))["weak"] == pytest.approx(1 / 63)


def test_the_same_chunk_id_in_two_indexes_is_two_candidates():
    merged = merge_indexes([ranked("bm25", ["a"], index="one"), ranked("bm25", ["a"], index="two")])
    assert [c.key for c in fuse(merged)] == [("one", "a"), ("two", "a")]


def test_framework_boost_multiplies_once_whatever_the_number_of_matching_tags():
    tagged = Candidate("a", "i", row=row("a", framework_tags=["SwiftData", "CloudKit"]), score=1.0)
    plain = Candidate("b", "i", row=row("b"), score=1.0)
    adjusted = adjust([tagged, plain], frameworks=("swiftdata", "CLOUDKIT"))
    assert scores_of(adjusted) == {"a": FRAMEWORK_BOOST, "b": 1.0}


def test_framework_boost_can_lift_a_tagged_chunk_over_a_slightly_better_one():
    plain = Candidate("a", "i", row=row("a"), score=1 / 61)
    tagged = Candidate("b", "i", row=row("b", framework_tags=["CloudKit"]), score=1 / 63)
    assert [c.chunk_id for c in adjust([plain, tagged], frameworks=("CloudKit",))] == ["b", "a"]


def test_chunks_deprecated_at_or_before_the_target_are_demoted():
    at = row("at", deprecated=True, deprecated_in_int=160000)
    later = row("later", deprecated=True, deprecated_in_int=170000)
    unknown = row("unknown", deprecated=True, deprecated_in_int=None)
    cands = [Candidate(r["chunk_id"], "i", row=r, score=1.0) for r in (at, later, unknown)]
    adjusted = adjust(cands, ios_version_int=160000)
    assert scores_of(adjusted) == {"at": DEPRECATED_DEMOTION, "later": 1.0, "unknown": 0.5}


def test_without_a_target_version_nothing_is_demoted():
    cand = Candidate("a", "i", row=row("a", deprecated=True, deprecated_in_int=160000), score=1.0)
    assert adjust([cand])[0].score == 1.0


def test_ties_break_by_index_then_chunk_id():
    fused = fuse(
        [
            ranked("bm25", ["b"], index="zeta"),
            ranked("bm25", ["b"], index="alpha", variant=1),
            ranked("bm25", ["a"], index="zeta", variant=2),
        ]
    )
    assert [c.key for c in fused] == [("alpha", "b"), ("zeta", "a"), ("zeta", "b")]


def test_fusion_is_the_same_whatever_the_order_of_the_lists():
    lists = [ranked("vector", ["a", "b", "c"]), ranked("bm25", ["c", "b", "a"])]
    assert [c.key for c in fuse(lists)] == [c.key for c in fuse(lists[::-1])]


def test_top_5_is_always_a_prefix_of_top_10():
    # Many exact ties (mirrored rankings) make any top-k-dependent cut visible.
    ids = [f"c{n:02d}" for n in range(30)]
    rows = [row(cid, f"distinct text {cid}") for cid in ids]
    engine = fake_engine(FakeIndex("docs", rows, vector=ids, bm25=ids[::-1]))
    top = {k: answer(QueryRequest(query="q", top_k=k, rerank=False), engine) for k in (5, 10)}
    five = [c["chunk_id"] for c in top[5].chunks]
    ten = [c["chunk_id"] for c in top[10].chunks]
    assert len(five) == 5 and ten[:5] == five


def test_candidates_per_signal_is_at_least_50_and_independent_of_top_k():
    ids = [f"c{n:02d}" for n in range(80)]
    index = FakeIndex("docs", [row(cid) for cid in ids])
    engine = fake_engine(index, settings=Settings(candidates_per_signal=10))
    answer(QueryRequest(query="q", top_k=3, rerank=False), engine)
    assert {k for _, _, k in index.calls} == {50}


def test_the_expansions_together_weigh_their_share_against_the_original():
    lists = [
        ranked("vector", ["a"]),
        ranked("bm25", ["b"]),
        ranked("bm25", ["c"], variant=1),
        ranked("bm25", ["c", "d"], variant=2),
    ]

    fused = fuse(lists, k=60, expansion_share=0.5)

    assert scores_of(fused) == pytest.approx(
        {"a": 1 / 61, "b": 1 / 61, "c": 0.25 / 61 + 0.25 / 61, "d": 0.25 / 62}, rel=1e-12
    )


def test_without_a_share_every_expansion_counts_like_the_original():
    lists = [ranked("bm25", ["a"]), ranked("bm25", ["b"], variant=1)]
    assert scores_of(fuse(lists, k=60)) == pytest.approx({"a": 1 / 61, "b": 1 / 61})


def test_weighted_fusion_scales_each_expansion_by_its_share():
    lists = [
        ranked("vector", ["a", "b"], scores=[0.9, 0.5]),
        ranked("bm25", ["b", "a"], scores=[8.0, 2.0], variant=1),
    ]

    fused = fuse(
        lists, method="weighted", weights={"vector": 0.6, "bm25": 0.4}, expansion_share=0.5
    )

    assert scores_of(fused) == pytest.approx({"a": 0.6 * 1.0, "b": 0.4 * 0.5 * 1.0})


def test_routed_expansions_search_only_the_keyword_leg():
    searched_vectors = []

    class CountingEmbedder(FakeEmbedder):
        def embed_queries(self, texts):
            searched_vectors.extend(texts)
            return super().embed_queries(texts)

    def expander(query, **kwargs):
        return FakeExpansion([query, "other words", "more words"], notes=[])

    index = FakeIndex("docs", [row(c, f"text {c}") for c in ("a", "b", "c", "d")])
    settings = Settings(expansion_route="bm25")
    engine = fake_engine(index, settings=settings, expander=expander, embedder=CountingEmbedder())

    answer(QueryRequest(query="question", expand=True, rerank=False), engine)

    assert searched_vectors == ["question"]
    assert sum(1 for signal, _, _ in index.calls if signal == "vector") == 1
    assert {t for s, t, _ in index.calls if s == "bm25"} >= {"other words", "more words"}


def test_each_candidate_keeps_what_each_signal_added_to_its_score():
    fused = fuse([ranked("vector", ["a", "b"]), ranked("bm25", ["b"])], k=60)
    by_id = {c.chunk_id: c for c in fused}
    assert by_id["b"].contributions == pytest.approx({"vector": 1 / 62, "bm25": 1 / 61})
    assert by_id["a"].contributions == pytest.approx({"vector": 1 / 61})
    for cand in fused:
        assert cand.score == pytest.approx(sum(cand.contributions.values()), rel=1e-12)


def test_the_json_shows_each_chunks_rank_score_and_contribution_per_signal():
    index = FakeIndex(
        "docs", [row(c, f"text {c}") for c in ("a", "b", "c")], vector=["a", "b"], bm25=["b", "c"]
    )
    response = answer(QueryRequest(query="question", rerank=False), fake_engine(index))
    chunk = next(c for c in response.chunks if c["chunk_id"] == "b")
    assert chunk["signals"]["vector"]["rank"] == 2 and chunk["signals"]["bm25"]["rank"] == 1
    added = sum(s["contribution"] for s in chunk["signals"].values())
    assert added == pytest.approx(chunk["score"], abs=1e-5)


def test_a_chunk_defining_a_named_identifier_is_doubled_once():
    defining = Candidate("a", "app", row={"symbol": "TripStore"}, score=0.4)
    member = Candidate("b", "app", row={"symbol": "TripStore.save"}, score=0.3)
    other = Candidate("c", "docs", row={"symbol": None}, score=0.7)
    out = adjust([defining, member, other], identifiers=["TripStore", "save"])
    assert scores_of(out) == pytest.approx({"a": 0.8, "b": 0.6, "c": 0.7})
    assert [c.chunk_id for c in out] == ["a", "c", "b"]


def test_a_part_of_a_split_type_listing_a_named_member_is_doubled():
    part = {"symbol": "TripStore", "metadata": {"members": ["trips", "fetchTrips"]}}
    other_part = {"symbol": "TripStore", "metadata": {"members": ["save"]}}
    cands = [
        Candidate("a", "app", row=part, score=0.4),
        Candidate("b", "app", row=other_part, score=0.4),
    ]
    out = adjust(cands, identifiers=["TripStore.fetchTrips"])
    assert scores_of(out) == pytest.approx({"a": 0.8, "b": 0.4})


def test_a_symbol_sharing_only_part_of_the_identifier_is_not_boosted():
    cand = Candidate("a", "app", row={"symbol": "Trip"}, score=0.4)
    assert adjust([cand], identifiers=["TripStore"])[0].score == pytest.approx(0.4)


def test_auto_fusion_uses_the_rule_the_index_calibration_chose():
    calibrated = FakeIndex(
        "docs",
        [row(c, f"text {c}") for c in ("a", "b", "c")],
        vector=["a", "b"],
        bm25=["b", "c"],
        calibration='{"rule": "rrf", "chunks": 3, "pairs": 300}',
    )
    response = answer(QueryRequest(query="question", rerank=False), fake_engine(calibrated))
    assert response.fusion == {"method": "rrf", "chosen_by": "calibration", "rrf_k": 60}


def test_indexes_that_chose_different_rules_are_fused_with_the_default_rule():
    rows = [row(c, f"text {c}") for c in ("a", "b")]
    rrf = FakeIndex("docs", rows, calibration='{"rule": "rrf"}')
    plain = FakeIndex("code", [row(c, f"code {c}") for c in ("x", "y")])
    response = answer(QueryRequest(query="question", rerank=False), fake_engine(rrf, plain))
    assert (response.fusion["method"], response.fusion["chosen_by"]) == ("adaptive", "default")


def test_a_fusion_asked_for_by_name_overrides_the_calibration():
    index = FakeIndex("docs", [row("a", "text a")], calibration='{"rule": "rrf"}')
    request = QueryRequest(query="question", rerank=False, fusion="adaptive")
    assert answer(request, fake_engine(index)).fusion["method"] == "adaptive"
    assert "chosen_by" not in answer(request, fake_engine(index)).fusion
