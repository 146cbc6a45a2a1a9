"""The callers, in other files, of what a chunk declares: retrieval's link places follow them
from a top result that declares a function to the code that calls it, which is where a
question like "what registers the modules" is answered (query.retrieval.bridges).

Only what resolution can vouch for is followed: a call whose candidates are all this
declaration, counting as this declaration its header's copy (an Objective-C method's
@interface in `X.h`, a C function's prototype) and the requirement it fulfils in a protocol
its type adopts, since a call through the protocol (`[loader loadImage...]`, `shape.draw()`)
reaches this implementation; never a guess among same-named methods of unrelated types
(resolution already leaves out declarations in languages the calling file cannot call).

A name declared in more than MAX_DECLARING_DOCS documents is passed over before its uses are
read, so a chunk declaring `init` or `invalidate` costs one indexed read, not thousands of
rows; and a declaration called from more than MAX_CALLER_DOCS other documents leads nowhere,
since which of its many callers a question means is a guess that would take a reserved place
from a good link.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from core.store.contract import IndexStore
from query.navigation.resolve import DEFINITION, Resolver, Row

CALLS = frozenset({"call", "send"})
INHERIT = "inherit"
# A method's implementation, its header's copy, and the protocol requirement (with the
# protocol's own header) it fulfils.
MAX_DECLARING_DOCS = 4
MAX_CALLER_DOCS = 3
# Shorter names (`add`, `get`, `run`) are declared and called everywhere.
MIN_NAME_CHARS = 4


@dataclass(frozen=True)
class CallerLink:
    """A chunk of another file that calls `name`, declared in chunk `declared_in`."""

    chunk_id: str
    name: str
    declared_in: str


def callers_of(index: IndexStore, chunks: Sequence[tuple[str, str]]) -> list[CallerLink]:
    """For chunks given as (chunk id, path), in that order of preference: the chunks of other
    documents that call what they declare, each caller chunk once (for the first chunk it
    calls into), callers of a declaration in the order of their files and lines."""
    wanted = {chunk_id for chunk_id, _ in chunks}
    declared: dict[str, list[Row]] = {}  # by chunk id: its declarations
    for path in dict.fromkeys(path for _, path in chunks if path):
        for row in index.references_in(path):
            mine = row["role"] == DEFINITION and row["chunk_id"] in wanted
            if mine and len(row["name"]) >= MIN_NAME_CHARS:
                declared.setdefault(row["chunk_id"], []).append(row)
    names = sorted({d["name"] for rows in declared.values() for d in rows})
    if not names:
        return []
    # Each read sees the last commit, so an ingest committing between two reads (`--watch`)
    # may leave a name declared in the first without definitions in the second: such a name
    # has nothing to follow.
    definitions: dict[str, list[Row]] = {}
    for row in index.definitions_named(names):
        definitions.setdefault(row["name"], []).append(row)
    followed = [
        n
        for n in names
        if 0 < len({d["doc_id"] for d in definitions.get(n, ())}) <= MAX_DECLARING_DOCS
    ]
    uses: dict[str, list[Row]] = {}
    for row in index.references_named(followed):
        if row["role"] in CALLS:
            uses.setdefault(row["name"], []).append(row)
    if not uses:
        return []
    imports = index.imports_of(sorted({u["doc_id"] for rows in uses.values() for u in rows}))
    uses = {n: rows for n, rows in uses.items() if n in definitions}
    adopts = _adoptions(index, [d for n in uses for d in definitions[n]])
    out: list[CallerLink] = []
    taken: set[str] = set()
    for chunk_id, _ in chunks:
        for declaration in declared.get(chunk_id, ()):
            name = declaration["name"]
            if name not in uses:
                continue
            own = _own(declaration, definitions[name], adopts)
            calling = _resolved_calls(declaration, definitions[name], own, uses[name], imports)
            if len({u["doc_id"] for u in calling}) > MAX_CALLER_DOCS:
                continue
            for use in calling:
                if use["chunk_id"] not in taken:
                    taken.add(use["chunk_id"])
                    out.append(CallerLink(use["chunk_id"], name, chunk_id))
    return out


def _adoptions(index: IndexStore, definitions: Sequence[Row]) -> dict[str, set[str]]:
    """Type → the types among the definitions' containers it adopts or inherits from, directly
    or through one another (`RCTImageLoader` → its protocols), read from the `inherit`
    records naming those containers: one query. A type is keyed both by its scope as
    recorded (`Studio.Brush`) and by its last name part (`Brush`): a declaration's container
    may be recorded either way, and a parent is named as written, often without its scope."""
    containers = sorted({d["scope"] for d in definitions if d["scope"]})
    direct: dict[str, set[str]] = {}
    for row in index.references_named(containers):
        if row["role"] == INHERIT and row["scope"]:
            for adopter in {row["scope"], _last_part(row["scope"])}:
                direct.setdefault(adopter, set()).add(row["name"])
    closed: dict[str, set[str]] = {}
    for adopter in direct:
        seen: set[str] = set()
        todo = [adopter]
        while todo:
            for parent in direct.get(todo.pop(), ()):
                if parent not in seen:
                    seen.add(parent)
                    todo.append(parent)
        closed[adopter] = seen
    return closed


def _own(declaration: Row, definitions: Sequence[Row], adopts: dict[str, set[str]]) -> list[Row]:
    """The definitions of the name that a call may reach and still run `declaration`: itself,
    its header's copy, and the requirements of the protocols its type adopts."""
    same = _identity(declaration)
    scope = declaration["scope"]
    adopted = adopts.get(scope) or adopts.get(_last_part(scope), set())
    return [d for d in definitions if _identity(d) == same or d["scope"] in adopted]


def _resolved_calls(
    declaration: Row,
    definitions: Sequence[Row],
    own: Sequence[Row],
    uses: Sequence[Row],
    imports: dict[str, list[str]],
) -> list[Row]:
    """The calls, from documents other than the declaration's, whose every candidate is one
    of `own`."""
    resolver = Resolver(definitions)
    mine = {id(d) for d in own}
    out = []
    for use in uses:
        if use["doc_id"] == declaration["doc_id"]:
            continue
        candidates = resolver.resolve(use, imports.get(use["doc_id"], ())).candidates
        if candidates and all(id(c) in mine for c in candidates):
            out.append(use)
    return out


def _identity(definition: Row) -> tuple[str, str, str]:
    """What makes two declarations one: their file's stem, type and name, as an Objective-C
    method's @interface in `X.h` and its @implementation in `X.m` share, and a C function
    declared in `x.h` and defined in `x.c`. Two types of one name in different files (a Swift
    and a Python `Shape`) stay two."""
    return (PurePosixPath(definition["path"]).stem, definition["scope"], definition["name"])


def _last_part(scope: str) -> str:
    return scope.rsplit(".", 1)[-1]
