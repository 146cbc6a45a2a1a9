"""The callers, in other files, of what a chunk declares: retrieval's link places follow them
from a top result that declares a function to the code that calls it, which is where a
question like "what registers the modules" is answered (query.retrieval.retrieve.bridges).

Only what resolution can vouch for is followed: a call whose candidates are all this
declaration of this type (its header and its implementation count as one), never a guess
among same-named declarations of other types or files; a name declared in more than
MAX_DECLARING_DOCS documents is passed over before its uses are read, so a chunk declaring
`init` or `invalidate` costs one indexed read, not thousands of rows; and a declaration
called from more than MAX_CALLER_DOCS other documents leads nowhere, since which two of its
many callers a question means is a guess that would take a reserved place from a good link.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from core.store.contract import IndexStore
from query.navigation.resolve import DEFINITION, Resolver, Row

CALLS = frozenset({"call", "send"})
MAX_DECLARING_DOCS = 2
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
    definitions: dict[str, list[Row]] = {}
    for row in index.definitions_named(names):
        definitions.setdefault(row["name"], []).append(row)
    followed = [
        n for n in names if len({d["doc_id"] for d in definitions[n]}) <= MAX_DECLARING_DOCS
    ]
    uses: dict[str, list[Row]] = {}
    for row in index.references_named(followed):
        if row["role"] in CALLS:
            uses.setdefault(row["name"], []).append(row)
    imports = index.imports_of(sorted({u["doc_id"] for rows in uses.values() for u in rows}))
    out: list[CallerLink] = []
    taken: set[str] = set()
    for chunk_id, _ in chunks:
        for declaration in declared.get(chunk_id, ()):
            name = declaration["name"]
            if name not in uses:
                continue
            calling = _resolved_calls(declaration, definitions[name], uses[name], imports)
            if len({u["doc_id"] for u in calling}) > MAX_CALLER_DOCS:
                continue
            for use in calling:
                if use["chunk_id"] not in taken:
                    taken.add(use["chunk_id"])
                    out.append(CallerLink(use["chunk_id"], name, chunk_id))
    return out


def _resolved_calls(
    declaration: Row,
    definitions: Sequence[Row],
    uses: Sequence[Row],
    imports: dict[str, list[str]],
) -> list[Row]:
    """The calls, from documents other than the declaration's, that can only mean this
    declaration: every candidate resolution leaves is this declaration (_identity)."""
    resolver = Resolver(definitions)
    same = _identity(declaration)
    out = []
    for use in uses:
        if use["doc_id"] == declaration["doc_id"]:
            continue
        candidates = resolver.resolve(use, imports.get(use["doc_id"], ())).candidates
        if candidates and all(_identity(c) == same for c in candidates):
            out.append(use)
    return out


def _identity(definition: Row) -> tuple[str, str, str]:
    """What makes two declarations one: their file's stem, type and name, as an Objective-C
    method's @interface in `X.h` and its @implementation in `X.m` share, and a C function
    declared in `x.h` and defined in `x.c`. Two types of one name in different files (a Swift
    and a Python `Shape`) stay two."""
    return (PurePosixPath(definition["path"]).stem, definition["scope"], definition["name"])
