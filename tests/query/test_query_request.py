"""Request validation, shared by the CLI and the worker: bad usage is a clear message and,
on the command line, exit code 2."""

from __future__ import annotations

import pytest

from core.store.sqlite.store import SQLiteStore
from query.cli.main import main
from query.retrieval.pipeline import UsageError, make_request
from query.types import MAX_QUERY_CHARS, QueryRequest


def usage_error(**fields) -> str:
    with pytest.raises(UsageError) as info:
        make_request(fields)
    return str(info.value)


def test_a_minimal_request_gets_the_defaults():
    assert make_request({"query": "  how to navigate  "}) == QueryRequest(query="how to navigate")


def test_every_field_is_accepted():
    request = make_request(
        {
            "query": "q",
            "domain": "ios",
            "ios_version": "26",
            "frameworks": ["SwiftData", "CloudKit"],
            "top_k": 3,
            "corag": True,
            "user_codebase": False,
            "indexes": ["docs"],
            "mode": "bm25",
            "fusion": "weighted",
            "max_tokens": 500,
            "fresh_within_days": 30,
            "include_deprecated": True,
            "strict": True,
            "rerank": False,
            "expand": False,
        }
    )
    assert request.ios_version == "26.0"
    assert request.frameworks == ("SwiftData", "CloudKit") and request.indexes == ("docs",)


def test_null_fields_mean_the_default():
    assert make_request({"query": "q", "top_k": None, "domain": None}) == QueryRequest(query="q")


def test_comma_separated_names_are_split_and_deduplicated():
    request = make_request({"query": "q", "indexes": "a, b,a", "frameworks": "SwiftUI,"})
    assert request.indexes == ("a", "b") and request.frameworks == ("SwiftUI",)


def test_missing_query():
    assert usage_error() == "missing query"


def test_empty_query():
    assert usage_error(query=" \n ") == "empty query"


def test_oversized_query():
    assert make_request({"query": "x" * MAX_QUERY_CHARS}).query
    assert "exceeds the limit of 4000" in usage_error(query="x" * (MAX_QUERY_CHARS + 1))


def test_unknown_domain_lists_the_domains():
    message = usage_error(query="q", domain="android")
    assert "unknown domain 'android'" in message and "general, ios, python" in message


def test_malformed_version():
    assert "malformed ios_version" in usage_error(query="q", ios_version="seventeen")


def test_top_k_below_one():
    assert usage_error(query="q", top_k=0) == "top_k must be at least 1, got 0"


def test_booleans_are_not_integers():
    assert "top_k must be an integer" in usage_error(query="q", top_k=True)


def test_unknown_mode_and_fusion():
    assert "unknown mode 'dense'" in usage_error(query="q", mode="dense")
    assert "unknown fusion 'sum'" in usage_error(query="q", fusion="sum")


def test_flags_must_be_booleans():
    assert usage_error(query="q", strict="yes") == "strict must be true or false, got 'yes'"


def test_an_index_list_naming_nothing():
    assert usage_error(query="q", indexes=" , ") == "indexes names no index"


def test_unknown_fields_are_refused():
    assert "unknown field(s) topk" in usage_error(query="q", topk=3)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["   "], "error: empty query"),
        (["x" * (MAX_QUERY_CHARS + 1)], "exceeds the limit"),
        (["q", "--domain", "android"], "unknown domain 'android'"),
        (["q", "--ios-version", "17.x"], "malformed ios_version"),
        (["q", "--top-k", "0"], "top_k must be at least 1"),
        (["q", "--store", "/nonexistent/store"], "no store directory /nonexistent/store"),
        (["q", "--store", "http://example.com/rag"], "store 'http://example.com/rag': not a"),
    ],
)
def test_the_cli_exits_2_on_bad_usage(argv, message, capsys):
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert message in captured.err and captured.out == ""


def test_the_cli_exits_2_on_an_unknown_index_and_lists_the_available_ones(tmp_path, capsys):
    SQLiteStore(tmp_path).open_index("docs", create=True).close()
    assert main(["q", "--store", str(tmp_path), "--index", "docs,nope", "--mode", "bm25"]) == 2
    assert "unknown index 'nope' (available: docs)" in capsys.readouterr().err


def test_every_unknown_field_is_named_at_once():
    assert "unknown field(s) k, topk" in usage_error(query="q", topk=3, k=1)


def test_a_wrongly_typed_list_names_the_field():
    assert usage_error(query="q", frameworks=[1, 2]).startswith("frameworks")


def test_the_json_schema_describes_every_field_for_a_calling_model():
    schema = QueryRequest.model_json_schema()
    assert schema["required"] == ["query"] and schema["additionalProperties"] is False
    assert all(prop.get("description") for prop in schema["properties"].values())
    assert schema["properties"]["top_k"]["minimum"] == 1
