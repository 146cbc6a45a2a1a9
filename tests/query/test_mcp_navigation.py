"""The MCP server's code-navigation tools (query.mcp.navigation) driven by the MCP SDK's own
client, in process, over the navigation fixtures ingested into a temporary store: their
schemas, what each returns, paging by max_tokens with a cursor, and an unknown index."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp import Client

from core.store.modes import LONG_LIVED
from query.mcp.server import build_server
from query.retrieval.engine import Engine
from tests.support.navigation import NAVIGATION, ingest_into, settings_for

CALL_TIMEOUT_S = 120.0


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    base = tmp_path_factory.mktemp("mcp-navigation")
    store = ingest_into(base, NAVIGATION)
    engine = Engine.open(settings_for(base), str(store), modes=LONG_LIVED)
    yield build_server(engine, threads=2, log=lambda _line: None)
    engine.close()


def calls(server, *requests: tuple[str, dict[str, Any]]) -> list[Any]:
    """The tools' results, one client session; a list_tools result for ("list", {})."""

    async def go() -> list[Any]:
        out = []
        with anyio.fail_after(CALL_TIMEOUT_S):
            async with Client(server) as client:
                for name, arguments in requests:
                    if name == "list":
                        out.append({t.name: t for t in (await client.list_tools()).tools})
                    else:
                        out.append(await client.call_tool(name, arguments))
        return out

    return anyio.run(go)


def test_the_navigation_tools_declare_typed_outputs_and_their_arguments(server):
    (tools,) = calls(server, ("list", {}))
    for name in ("find_symbol", "find_references", "call_graph"):
        tool = tools[name]
        assert tool.annotations.read_only_hint
        assert set(tool.input_schema["properties"]) == {
            "name",
            "indexes",
            "kinds",
            "max_tokens",
            "cursor",
        }
        assert tool.input_schema["required"] == ["name"]
        assert {"symbol", "total", "next_cursor"} <= set(tool.output_schema["properties"])


def test_find_symbol_gives_a_definition_with_its_container_and_how_many_uses(server):
    (result,) = calls(server, ("find_symbol", {"name": "area"}))
    out = result.structured_content
    (area,) = out["definitions"]
    assert (area["path"], area["lines"], area["container"]) == (
        "swift/Shape+Area.swift",
        [2, 4],
        "Shape",
    )
    assert (out["references"], out["next_cursor"]) == (1, None)


def test_find_references_resolves_a_typescript_call_through_an_import_alias(server):
    (result,) = calls(server, ("find_references", {"name": "register"}))
    uses = {
        (u["path"], u["line"], u["use"], u["resolved"])
        for u in result.structured_content["references"]
    }
    assert ("typescript/loader.ts", 6, "call", "typescript/registry.ts:5") in uses


def test_an_ambiguous_use_reports_its_candidates_instead_of_a_guess(server):
    (result,) = calls(server, ("find_references", {"name": "reset", "kinds": ["function"]}))
    canvas = [u for u in result.structured_content["references"] if u["line"] == 15]
    assert [(u["path"], u["resolved"], u["candidates"]) for u in canvas] == [
        ("swift/Canvas.swift", None, 2)
    ]


def test_call_graph_lists_callers_and_callees(server):
    (result,) = calls(server, ("call_graph", {"name": "shout:"}))
    edges = result.structured_content["edges"]
    assert ("caller", "Greeter.greet:times:") in {(e["direction"], e["caller"]) for e in edges}


def test_pages_under_a_small_budget_add_up_to_the_whole_list(server):
    (whole,) = calls(server, ("find_references", {"name": "Shape"}))
    expected = whole.structured_content["references"]
    assert len(expected) >= 3
    pages, cursor = [], 0
    while cursor is not None:
        (result,) = calls(
            server, ("find_references", {"name": "Shape", "max_tokens": 1, "cursor": cursor})
        )
        pages.append(result.structured_content["references"])
        cursor = result.structured_content["next_cursor"]
    assert [len(p) for p in pages] == [1] * len(expected)  # one item fits no budget: one each
    assert [u for p in pages for u in p] == expected


def test_an_unknown_index_is_a_tool_error(server):
    (result,) = calls(server, ("find_references", {"name": "area", "indexes": ["nope"]}))
    assert result.is_error
    assert "nope" in result.content[0].text
