"""`symbol NAME` and `--impact PATH[:LINES]` over one store's indexes: definitions with their
signature and availability, references resolved as far as the index allows
(query.navigation.resolve), and declaration-level call edges."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any

from core.store.contract import IndexStore
from query.navigation.resolve import DEFINITION, Resolution, Resolver, Row

CALLS = frozenset({"call", "send"})
_SIGNATURE_CHARS = 200

# A handle on an index by name, lent for the duration of a `with` (the engine's `checkout`):
# lookups read through the handles a process already holds, never a fresh open per call.
Checkout = Callable[[str], AbstractContextManager[IndexStore]]


def find_symbol(
    checkout: Checkout, name: str, indexes: Sequence[str], kinds: Sequence[str] = ()
) -> dict[str, Any]:
    """Definitions, references, callers and callees of `name` in the indexes."""
    out: dict[str, Any] = {"symbol": name, "definitions": [], "references": []}
    out.update(callers=[], callees=[])
    for index_name in indexes:
        with checkout(index_name) as index:
            found = _symbol_in(index, name, kinds)
        for key, items in found.items():
            out[key] += [{"index": index_name, **item} for item in items]
    return out


def _symbol_in(index: IndexStore, name: str, kinds: Sequence[str]) -> dict[str, list[Any]]:
    definitions, pairs = _resolved_uses(index, name, kinds)
    return {
        "definitions": _described(index, definitions),
        "references": [_reference(u, r) for u, r in pairs],
        "callers": _callers(pairs),
        "callees": _callees(index, definitions),
    }


def _resolved_uses(
    index: IndexStore, name: str, kinds: Sequence[str]
) -> tuple[list[Row], list[tuple[Row, Resolution]]]:
    """The definitions of `name` (of `kinds`, when given) and each use with its resolution."""
    rows = index.references_named([name])
    definitions = [r for r in rows if r["role"] == DEFINITION]
    if kinds:
        definitions = [d for d in definitions if d["kind"] in kinds]
    uses = [r for r in rows if r["role"] != DEFINITION]
    parameters = {(u["path"], u["scope"]) for u in uses if u["role"] == "param"}
    resolver = Resolver(definitions, parameters)
    # The imports of only the files whose uses still have several candidates after the
    # enclosing type and the file, read in one query.
    imports = index.imports_of(sorted({u["doc_id"] for u in uses if resolver.needs_imports(u)}))
    resolutions = [resolver.resolve(u, imports.get(u["doc_id"], ())) for u in uses]
    if kinds:  # uses that can only mean a declaration of another kind are left out
        pairs = [(u, r) for u, r in zip(uses, resolutions, strict=True) if r.candidates]
    else:
        pairs = list(zip(uses, resolutions, strict=True))
    return definitions, pairs


def _described(index: IndexStore, definitions: list[Row]) -> list[dict[str, Any]]:
    """Each definition with its signature (its first line as written) and the availability
    its chunk was tagged with."""
    chunks = index.fetch(list({d["chunk_id"] for d in definitions}))
    out = []
    for d in definitions:
        chunk = chunks.get(d["chunk_id"], {})
        out.append(
            {
                "name": d["name"],
                "kind": d["kind"],
                "container": d["scope"],
                "path": d["path"],
                "lines": [d["line"], d["end_line"]],
                "signature": _line_of(chunk, d["line"]),
                "availability": _availability(chunk),
            }
        )
    return out


def _line_of(chunk: dict[str, Any], line: int) -> str:
    start = chunk.get("start_line") or 0
    lines = (chunk.get("content") or "").splitlines()
    at = line - start
    return lines[at].strip()[:_SIGNATURE_CHARS] if 0 <= at < len(lines) else ""


def _availability(chunk: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if chunk.get("platforms"):
        out["platforms"] = chunk["platforms"]
    if chunk.get("deprecated"):
        out["deprecated"] = chunk.get("deprecated_in") or True
    return out


def _reference(use: Row, resolution: Resolution) -> dict[str, Any]:
    return {
        "path": use["path"],
        "line": use["line"],
        "enclosing": use["scope"],
        "use": use["role"],
        "receiver": use["qualifier"],
        **resolution.describe(),
    }


def _callers(pairs: list[tuple[Row, Resolution]]) -> list[dict[str, Any]]:
    """The declarations that call the symbol, once each, with how many calls they make."""
    seen: dict[tuple[str, str], dict[str, Any]] = {}
    for use, resolution in pairs:
        if use["role"] in CALLS:
            key = (use["path"], use["scope"])
            entry = seen.setdefault(key, {"caller": use["scope"], "path": use["path"], "calls": 0})
            entry["calls"] += 1
            entry.update(resolution.describe())
    return list(seen.values())


def _callees(index: IndexStore, definitions: list[Row]) -> list[dict[str, Any]]:
    """What each definition calls: the calls made inside it (one query for all of them),
    resolved as far as possible against the declarations of the names called (one more)."""
    qualified = {
        id(d): f"{d['scope']}.{d['name']}" if d["scope"] else d["name"] for d in definitions
    }
    calls = index.calls_in([(d["doc_id"], qualified[id(d)]) for d in definitions])
    inside: dict[tuple[str, str], list[Row]] = {}
    for call in calls:
        inside.setdefault((call["doc_id"], call["scope"]), []).append(call)
    by_name: dict[str, list[Row]] = {}
    for t in index.definitions_named(list({c["name"] for c in calls})):
        by_name.setdefault(t["name"], []).append(t)
    resolvers = {name: Resolver(targets) for name, targets in by_name.items()}
    out: list[dict[str, Any]] = []
    for d in definitions:
        caller = qualified[id(d)]
        for call in inside.get((d["doc_id"], caller), ()):
            resolver = resolvers.get(call["name"]) or Resolver(())
            out.append(
                {
                    "caller": caller,
                    "callee": call["name"],
                    "path": call["path"],
                    "line": call["line"],
                    **resolver.resolve(call).describe(),
                }
            )
    return out


def impact(
    checkout: Checkout, path: str, lines: tuple[int, int] | None, indexes: Sequence[str]
) -> dict[str, Any]:
    """The declarations in `path` (within `lines`) and every place that uses each: the uses
    whose resolution kept the declaration among its candidates (resolved to it, or ambiguous
    between it and others). A use resolution rejected (none of its candidates is this
    declaration, or it has none: a file in another language family, a name a parameter
    shadows) is no use of it.

    With lines, a declaration around them that holds another declaration they touch (an
    extension whose method changes) is not itself changed: it goes to `containing`, with no
    uses, so that an agent checks the member's callers, not every use of the type."""
    out: dict[str, Any] = {
        "path": path,
        "lines": list(lines) if lines else None,
        "declarations": [],
        "containing": [],
    }
    for index_name in indexes:
        with checkout(index_name) as index:
            rows = index.references_in(path)
            declared = [
                r
                for r in rows
                if r["role"] == DEFINITION
                and (lines is None or (r["line"] <= lines[1] and r["end_line"] >= lines[0]))
            ]
            for d in declared:
                entry = {
                    "index": index_name,
                    "name": d["name"],
                    "kind": d["kind"],
                    "container": d["scope"],
                    "lines": [d["line"], d["end_line"]],
                }
                if lines is not None and _holds_another(d, declared):
                    out["containing"].append(entry)
                    continue
                _, pairs = _resolved_uses(index, d["name"], ())
                entry["references"] = [_reference(u, r) for u, r in pairs if _means(r, d)]
                out["declarations"].append(entry)
    return out


def _means(resolution: Resolution, declaration: Row) -> bool:
    """Whether `declaration` is among the candidates resolution kept for a use."""
    where = (declaration["path"], declaration["line"], declaration["scope"])
    return any((c["path"], c["line"], c["scope"]) == where for c in resolution.candidates)


def _holds_another(declaration: Row, others: list[Row]) -> bool:
    """Whether another of `others` lies within `declaration`'s lines (a member of it)."""
    first, last = declaration["line"], declaration["end_line"]
    return any(
        o is not declaration
        and first <= o["line"]
        and o["end_line"] <= last
        and (o["line"], o["end_line"]) != (first, last)
        for o in others
    )
