"""End to end on a small real store (built once per session with the ingest flow and the
real MiniLM): filters, boosts, indexes, the CLI's output and exit codes."""

from __future__ import annotations

import json

import pytest

from core.tokens import counter_for_model
from query.cli.main import main
from query.errors import is_degraded
from query.retrieval.boosts import DEPRECATED_DEMOTION, FRAMEWORK_BOOST
from query.retrieval.pipeline import answer
from query.types import QueryRequest
from tests.support.models import default_model_dir
from tests.support.query import BuiltStores, build_stores, shared_engine

pytestmark = pytest.mark.slow

NAVIGATION_VIEW = "documentation/swiftui/navigationview"
NAVIGATION_STACK = "documentation/swiftui/navigationstack"
OBSERVABLE_MACRO = "documentation/observation/observable()"
OBSERVABLE_OBJECT = "documentation/combine/observableobject"
APP_WINDOWS = "documentation/uikit/uiapplication/windows"
SCENE_WINDOWS = "documentation/uikit/uiwindowscene/windows"


@pytest.fixture(scope="module")
def stores(tmp_path_factory) -> BuiltStores:
    return build_stores(tmp_path_factory.getbasetemp() / "query-stores")


@pytest.fixture(scope="module")
def engine(stores):
    return shared_engine(stores)


def ask(engine, query: str, **fields):
    fields = {"top_k": 20, "rerank": False, "expand": False, **fields}
    return answer(QueryRequest(query=query, **fields), engine)


def paths(response) -> list[str]:
    return [c["path"] for c in response.chunks]


def chunk_at(response, path: str) -> dict:
    return next(c for c in response.chunks if c["path"] == path)


def test_an_ios_15_target_excludes_a_17_api_and_one_deprecated_in_15(engine):
    everything = ask(engine, "observe model changes and find the key window")
    assert {OBSERVABLE_MACRO, APP_WINDOWS} <= set(paths(everything))
    ios15 = ask(engine, "observe model changes and find the key window", ios_version="15.0")
    assert OBSERVABLE_MACRO not in paths(ios15) and APP_WINDOWS not in paths(ios15)
    assert {OBSERVABLE_OBJECT, SCENE_WINDOWS} <= set(paths(ios15))


def test_an_ios_26_target_excludes_navigation_view_deprecated_in_16(engine):
    response = ask(engine, "push views on a navigation stack", ios_version="26.0")
    assert NAVIGATION_VIEW not in paths(response)
    assert NAVIGATION_STACK in paths(response)


def test_include_deprecated_readmits_a_deprecated_chunk_at_a_demoted_score(engine):
    query = "push views on a navigation stack"
    plain = chunk_at(ask(engine, query), NAVIGATION_VIEW)
    readmitted = chunk_at(
        ask(engine, query, ios_version="26.0", include_deprecated=True), NAVIGATION_VIEW
    )
    assert readmitted["deprecated"] and readmitted["deprecated_in"] == "16.0"
    assert readmitted["score"] == pytest.approx(plain["score"] * DEPRECATED_DEMOTION, abs=2e-6)


def test_a_requested_framework_boosts_the_chunks_tagged_with_it(engine):
    query = "sync the app's data across devices"
    plain = ask(engine, query, indexes=("docs",))
    boosted = ask(engine, query, indexes=("docs",), frameworks=("CloudKit",))
    for chunk in boosted.chunks:
        before = chunk_at(plain, chunk["path"])["score"]
        factor = FRAMEWORK_BOOST if "CloudKit" in chunk["framework_tags"] else 1.0
        assert chunk["score"] == pytest.approx(before * factor, abs=2e-6)
    assert "CloudKit" in boosted.chunks[0]["framework_tags"]


def test_user_code_passes_the_domain_filter_unless_switched_off(engine):
    response = ask(engine, "save a trip", domain="python")
    user_code = [c for c in response.chunks if c["source"] == "user_codebase"]
    assert user_code and {c["domain"] for c in user_code} == {"ios"}
    others = {c["domain"] for c in response.chunks if c["source"] != "user_codebase"}
    assert others == {"python", "general"}
    without = ask(engine, "save a trip", domain="python", user_codebase=False)
    assert {c["domain"] for c in without.chunks} == {"python", "general"}
    assert all(c["source"] != "user_codebase" for c in without.chunks)


def test_a_domain_admits_general_chunks_too(engine):
    response = ask(engine, "run child tasks concurrently", domain="ios", user_codebase=False)
    assert {c["domain"] for c in response.chunks} == {"ios", "general"}


def test_results_fuse_across_indexes_and_each_names_its_index(engine):
    response = ask(engine, "save trips with SwiftData and sync them with CloudKit", top_k=10)
    assert {c["index"] for c in response.chunks} == {"docs", "app"}
    assert not is_degraded(response.to_dict())


def test_the_index_option_restricts_the_search(engine):
    response = ask(engine, "save trips", indexes=("app",))
    assert response.chunks and {c["index"] for c in response.chunks} == {"app"}


def test_token_counts_are_the_real_tokenizers_count_of_what_is_shown(engine):
    response = ask(engine, "navigation", top_k=5)
    # The stored content counts are used (the sample indexes were built with this model's
    # tokenizer) and must add up to the count of the whole shown text.
    assert all(engine.stored_counts_usable(name) for name in ("docs", "app"))
    counter = counter_for_model(default_model_dir())
    for chunk in response.chunks:
        shown = f"{chunk['context']}\n{chunk['content']}" if chunk["context"] else chunk["content"]
        assert chunk["token_count"] == counter.count(shown)
    assert response.total_tokens == sum(c["token_count"] for c in response.chunks)


def test_the_token_budget_keeps_a_prefix_of_the_ranking(engine):
    full = ask(engine, "navigation", top_k=6)
    budget = full.chunks[0]["token_count"] + full.chunks[1]["token_count"]
    packed = ask(engine, "navigation", top_k=6, max_tokens=budget)
    assert [c["chunk_id"] for c in packed.chunks] == [c["chunk_id"] for c in full.chunks[:2]]


def test_top_5_is_a_prefix_of_top_10_on_a_real_index(engine):
    five = ask(engine, "how do I store data", top_k=5, expand=True)
    ten = ask(engine, "how do I store data", top_k=10, expand=True)
    assert [c["chunk_id"] for c in ten.chunks][:5] == [c["chunk_id"] for c in five.chunks]


# -- the command line ---------------------------------------------------------------------


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_json_has_the_documented_shape_and_exits_0(stores, capsys):
    code, out, _ = cli(
        capsys, "NavigationStack", "--store", str(stores.main), "--json", "--top-k", "3"
    )
    result = json.loads(out)
    assert code == 0
    assert set(result) == {
        "chunks", "total_tokens", "query_expansions", "corag_trace", "timings_ms", "notes",
        "fusion",
    }  # fmt: skip
    assert len(result["chunks"]) == 3 and result["query_expansions"][0] == "NavigationStack"
    assert set(result["timings_ms"]) == {
        "expand", "embed", "vector", "bm25", "fuse", "links", "corag", "rerank", "pack",
        "total",
    }  # fmt: skip
    first = result["chunks"][0]
    assert set(first["ranks"]) == {"vector", "bm25", "rerank"}
    assert first["index"] in {"docs", "app"} and first["token_count"] > 0


def test_cli_prints_a_readable_list_and_notes_on_stderr(stores, capsys):
    code, out, err = cli(
        capsys, "NavigationStack", "--store", str(stores.main), "--top-k", "2", "--no-rerank"
    )
    assert code == 0
    assert out.startswith("1. ") and "§" in out and "iOS 16.0+" in out and "│ " in out
    assert "note: reranking off (--no-rerank); fused order kept" in err


def test_cli_exits_1_when_nothing_matches(stores, capsys):
    code, out, _ = cli(
        capsys,
        "zzyzx",
        "--store",
        str(stores.main),
        "--domain",
        "trading",
        "--no-user-codebase",
        "--mode",
        "bm25",
    )
    assert code == 1 and out.strip() == "no results"


def test_strict_turns_a_degraded_signal_into_exit_1(stores, capsys):
    argv = ("NavigationStack", "--store", str(stores.mixed), "--json", "--no-expand")
    code, out, err = cli(capsys, *argv)
    assert code == 0
    assert any("legacy" in n and "acme/other-embedder" in n for n in json.loads(out)["notes"])
    assert "note: degraded: vector search skipped on index 'legacy'" in err
    code, out, err = cli(capsys, *argv, "--strict")
    assert code == 1 and json.loads(out)["chunks"]
    assert "--strict: the answer is degraded" in err


@pytest.mark.parametrize(
    ("identifier", "defined_at"),
    [("TripStore", ("symbol", "TripStore")), ("NavigationStack", ("path", NAVIGATION_STACK))],
)
def test_a_query_naming_an_identifier_reaches_its_defining_chunk_first(
    engine, identifier, defined_at
):
    field, value = defined_at
    assert ask(engine, identifier).chunks[0][field] == value


def test_a_swift_extension_links_to_the_declaration_of_its_type(engine):
    with engine.checkout("app") as index:
        declarations = index.chunk_symbols()
        extension = next(d for d in declarations if d.kind == "extension")
        text = index.fetch([extension.chunk_id])[extension.chunk_id]["content"]
    declaration = next(d for d in declarations if d.symbol == "Trip" and d.kind == "class")
    links = engine.links("app")
    assert extension.symbol == "Trip" and "Trip" in links.mentioned(text)
    assert links.chunks_of("Trip") == [declaration.chunk_id]
