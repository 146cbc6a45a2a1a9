"""The MCP server's code-navigation tools: `find_symbol`, `find_references` and `call_graph`,
the answers of `python -m query symbol` (query.navigation.lookup) one list at a time.

Each tool returns one page of its list: items in the lookup's order until the next would take
the page past `max_tokens` (counted with the engine's tokenizer on each item's JSON, as
retrieve counts chunks; a page holds at least one item, so paging always moves on), the
list's `total`, and `next_cursor` to pass back as `cursor` for the rest (null on the last
page). The lookup is recomputed per call, so a page after a re-ingest is of the new index.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from typing import Annotated, Any

from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp_types import ToolAnnotations
from pydantic import BaseModel, Field

from core.store.contract import UnknownIndex
from query.navigation.lookup import find_symbol
from query.retrieval.engine import Engine

DEFAULT_MAX_TOKENS = 2000

Run = Callable[..., Awaitable[Any]]  # fn(*args) in a worker thread

NameArg = Annotated[
    str,
    Field(
        min_length=1,
        description="The declaration's name as written: `register`, `Shape`, an Objective-C "
        "selector as `greet:times:`.",
    ),
]
IndexesArg = Annotated[
    list[str] | None, Field(description="Indexes to read; default: the server's.")
]
KindsArg = Annotated[
    list[str] | None,
    Field(description="Only definitions of these kinds (function, method, class, ...)."),
]
MaxTokensArg = Annotated[
    int,
    Field(ge=1, description="A budget for this page's items; the rest come with next_cursor."),
]
CursorArg = Annotated[
    int, Field(ge=0, description="next_cursor of the previous page; 0 for the first.")
]


class Definition(BaseModel):
    index: str
    name: str
    kind: str = Field(description="function, method, class, struct, protocol, category, ...")
    container: str = Field(description="The type it is a member of ('' at top level).")
    path: str
    lines: list[int] = Field(description="[first, last] line of the declaration.")
    signature: str = Field(description="Its first line as written.")
    availability: dict[str, Any] = Field(
        description="The platforms/versions and deprecation its chunk was tagged with."
    )


class Use(BaseModel):
    index: str
    path: str
    line: int
    enclosing: str = Field(description="The declaration the use is in ('' at top level).")
    use: str = Field(
        description="call, send, selector, member, type, inherit, import, value; param (a "
        "parameter declared with the name), category (an Objective-C category's own name), "
        "unparsed (a name inside code the parser could not read)"
    )
    receiver: str = Field(description="What it is called on as written ('' for none).")
    resolved: str | None = Field(
        default=None, description="path:line of the one declaration it means, when known."
    )
    candidates: int | None = Field(
        default=None,
        description="Otherwise how many declarations of that name it may mean (0: none in "
        "the index, a framework's or a library's).",
    )
    names: str | None = Field(
        default=None,
        description="Instead of either: what the name stands for here when it is no use of a "
        "declaration ('parameter': a parameter's declaration or a read of it in the same "
        "declaration; 'category': a category's own name).",
    )


class CallEdge(BaseModel):
    index: str
    direction: str = Field(description="'caller' (calls the symbol) or 'callee' (it calls).")
    caller: str = Field(description="The calling declaration ('' at top level).")
    callee: str = Field(description="The called name.")
    path: str
    line: int | None = Field(default=None, description="The call's line (callees).")
    calls: int | None = Field(default=None, description="How many calls it makes (callers).")
    resolved: str | None = Field(default=None, description="path:line of the declaration.")
    candidates: int | None = Field(default=None, description="Else how many it may mean.")


class SymbolPage(BaseModel):
    symbol: str
    definitions: list[Definition]
    references: int = Field(description="How many uses find_references lists.")
    total: int = Field(description="Definitions in all pages.")
    next_cursor: int | None = Field(description="Pass as cursor for the next page; null: done.")


class ReferencePage(BaseModel):
    symbol: str
    references: list[Use]
    total: int = Field(description="Uses in all pages.")
    next_cursor: int | None = Field(description="Pass as cursor for the next page; null: done.")


class CallGraphPage(BaseModel):
    symbol: str
    edges: list[CallEdge]
    total: int = Field(description="Edges in all pages (callers first, then callees).")
    next_cursor: int | None = Field(description="Pass as cursor for the next page; null: done.")


def page(
    items: Sequence[dict[str, Any]], cursor: int, max_tokens: int, count: Callable[[str], int]
) -> tuple[list[dict[str, Any]], int | None]:
    """The items from `cursor` that fit `max_tokens` (at least one), and the next cursor."""
    out: list[dict[str, Any]] = []
    used = 0
    at = cursor
    while at < len(items):
        cost = count(json.dumps(items[at], ensure_ascii=False))
        if out and used + cost > max_tokens:
            break
        out.append(items[at])
        used += cost
        at += 1
    return out, (at if at < len(items) else None)


def navigation_tools(
    engine: Engine, run: Run, default_indexes: tuple[str, ...] | None
) -> list[Tool]:
    """The three tools, reading `engine`'s store through `run` (a worker thread)."""

    async def lookup(name: str, indexes: list[str] | None, kinds: list[str] | None) -> dict:
        wanted = tuple(indexes) if indexes else default_indexes
        try:
            names = await run(engine.resolve_indexes, wanted)
        except UnknownIndex as exc:
            raise ToolError(str(exc)) from None
        return await run(find_symbol, engine.checkout, name, names, kinds or ())

    async def paged(items: list[dict], cursor: int, max_tokens: int) -> tuple[list, int | None]:
        counter = await run(engine.counter)
        return page(items, cursor, max_tokens, counter.count)

    async def find_symbol_tool(
        name: NameArg,
        indexes: IndexesArg = None,
        kinds: KindsArg = None,
        max_tokens: MaxTokensArg = DEFAULT_MAX_TOKENS,
        cursor: CursorArg = 0,
    ) -> SymbolPage:
        """Where a symbol of the user's code is declared: each definition's path, lines,
        kind, container type, signature and availability, from the index alone (no build,
        no language server). Then find_references for its uses, call_graph for what calls
        it and what it calls."""
        found = await lookup(name, indexes, kinds)
        items, next_cursor = await paged(found["definitions"], cursor, max_tokens)
        return SymbolPage(
            symbol=name,
            definitions=[Definition.model_validate(d) for d in items],
            references=len(found["references"]),
            total=len(found["definitions"]),
            next_cursor=next_cursor,
        )

    async def find_references(
        name: NameArg,
        indexes: IndexesArg = None,
        kinds: KindsArg = None,
        max_tokens: MaxTokensArg = DEFAULT_MAX_TOKENS,
        cursor: CursorArg = 0,
    ) -> ReferencePage:
        """Every use of a symbol in the user's code, before changing it: path, line, the
        declaration the use is in, the kind of use (call, send, member, type, inherit,
        import, ...) and the receiver. A use resolves to one definition (`resolved`
        path:line) when the index can tell which; otherwise `candidates` says how many
        declarations of that name it may mean, rather than a guess."""
        found = await lookup(name, indexes, kinds)
        items, next_cursor = await paged(found["references"], cursor, max_tokens)
        return ReferencePage(
            symbol=name,
            references=[Use.model_validate(u) for u in items],
            total=len(found["references"]),
            next_cursor=next_cursor,
        )

    async def call_graph(
        name: NameArg,
        indexes: IndexesArg = None,
        kinds: KindsArg = None,
        max_tokens: MaxTokensArg = DEFAULT_MAX_TOKENS,
        cursor: CursorArg = 0,
    ) -> CallGraphPage:
        """The declaration-level call edges of a symbol: its callers (each calling
        declaration once, with how many calls) and its callees (each call made inside its
        definitions, with where it resolves)."""
        found = await lookup(name, indexes, kinds)
        edges = [{"direction": "caller", "callee": name, **c} for c in found["callers"]]
        edges += [{"direction": "callee", **c} for c in found["callees"]]
        items, next_cursor = await paged(edges, cursor, max_tokens)
        return CallGraphPage(
            symbol=name,
            edges=[CallEdge.model_validate(e) for e in items],
            total=len(edges),
            next_cursor=next_cursor,
        )

    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)
    return [
        Tool.from_function(find_symbol_tool, name="find_symbol", annotations=read_only),
        Tool.from_function(find_references, annotations=read_only),
        Tool.from_function(call_graph, annotations=read_only),
    ]
