"""What a code file declares and uses, read from the tree the chunker already parsed: one
tree-sitter query per language (chunkers/code/queries/<name>.scm) whose captures say what a
node is, and the few names a query cannot spell (an Objective-C selector) built here.

Capture names of a query file:

* `@def.<kind>` on a declaration node, with `@name` on its name node in the same pattern
  (without `@name` the name is built by `_special_name`);
* a kind of use on the name node that is used: `@call`, `@send` (an Objective-C message, on
  the whole message expression), `@selector`, `@member`, `@type`, `@inherit`, `@import`,
  `@value` (any other identifier read in an expression), optionally with `@qualifier` on
  the receiver (`self`, `Logger.shared`) and, for an import renaming what it brings in,
  `@alias` on the new name: later uses of the alias count as uses of the original.

A node captured by several patterns keeps its most specific use (`_PRIORITY`). Each record
gets the innermost declaration around it as its `scope` (for a declaration: the innermost
type around it, so a method of an extension or category is a member of that type).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from importlib import resources

from tree_sitter import Language, Node, Query, QueryCursor

from chunkers.model import Piece

DEFINITION = "definition"
# Most specific first: a node a query captures twice keeps the earlier use.
_PRIORITY = ("send", "selector", "call", "inherit", "import", "member", "type", "value")
USE_KINDS = frozenset(_PRIORITY)
# Declaration kinds whose members are scoped to them (a method's container).
TYPE_KINDS = frozenset(
    {
        "class",
        "struct",
        "enum",
        "protocol",
        "extension",
        "actor",
        "interface",
        "implementation",
        "category",
        "trait",
        "impl",
        "object",
        "record",
        "union",
        "namespace",
        "module",
    }
)
_QUALIFIER_CHARS = 80
# The receiver itself: no declaration of an index is named so.
_RECEIVER_WORDS = frozenset({"self", "this", "super", "Self", "cls"})
_SELECTOR = re.compile(rb"@selector\s*\(\s*([^)\s]+)\s*\)")


@dataclass(frozen=True, slots=True)
class Reference:
    """One declaration (`role` "definition") or one use of a name in a code file."""

    name: str
    role: str  # "definition" or a use kind (USE_KINDS)
    line: int  # 1-based
    end_line: int
    kind: str = ""  # a definition's declaration kind
    scope: str = ""  # the enclosing type (definitions) or declaration (uses)
    qualifier: str = ""  # the receiver of a member use or message, as written


@cache
def query_for(language: Language, name: str) -> Query:
    """The compiled query file `name` (chunkers/code/queries/<name>.scm) for a grammar."""
    return Query(language, query_text(name))


def query_text(name: str) -> str:
    """A query file's text, after the files it names on a first line `; inherits: a b` (the
    grammars of Objective-C and C++ extend C's, so their files add to C's)."""
    text = resources.files("chunkers.code").joinpath("queries", f"{name}.scm").read_text()
    first = text.split("\n", 1)[0]
    if first.startswith("; inherits:"):
        text = "\n".join(query_text(n) for n in first.split(":", 1)[1].split()) + "\n" + text
    return text


def extract(root: Node, query: Query) -> list[Reference]:
    """The definitions and uses `query` finds under `root`, in source order, scoped."""
    defs: list[tuple[Node, str, str]] = []  # declaration node, kind, name
    uses: dict[tuple[int, int], tuple[Node, str, str]] = {}  # by name node: use, qualifier
    aliases: dict[str, str] = {}
    claimed: set[tuple[int, int]] = set()  # names declared, or parts of a selector
    for _, captures in QueryCursor(query).matches(root):
        for key, nodes in captures.items():
            if key.startswith("def."):
                named = captures.get("name")
                if named:
                    claimed.add(_span(named[0]))
                name = _text(named[0]) if named else _special_name(nodes[0], claimed)
                if name:
                    defs.append((nodes[0], key[4:], name))
            elif key in USE_KINDS:
                node = nodes[0]
                if key == "import" and "alias" in captures:
                    aliases[_text(captures["alias"][0])] = _text(node)
                    claimed.add(_span(captures["alias"][0]))
                qual = captures.get("qualifier")
                span = _span(node)
                held = uses.get(span)
                if held is None or _PRIORITY.index(key) < _PRIORITY.index(held[1]):
                    uses[span] = (node, key, _text(qual[0])[:_QUALIFIER_CHARS] if qual else "")
    named_uses = []
    for node, role, qualifier in uses.values():
        name = _special_name(node, claimed) if role in ("send", "selector") else _text(node)
        named_uses.append((node, role, qualifier, name))
    kept = [u for u in named_uses if _span(u[0]) not in claimed and u[3] not in _RECEIVER_WORDS]
    return _scoped(defs, kept, aliases)


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "replace")


def _special_name(node: Node, claimed: set[tuple[int, int]]) -> str:
    """Names a query cannot capture as one node: Objective-C selectors and class names. The
    nodes the name is made of go to `claimed`: they are no uses of their own."""
    kind = node.type
    if kind in ("method_definition", "method_declaration"):
        return _selector(node, claimed, keyword=lambda c, _: True)
    if kind == "message_expression":
        return _selector(node, claimed, keyword=lambda c, i: _field(node, i) == "method")
    if kind == "selector_expression":
        found = _SELECTOR.search(node.text or b"")
        return found.group(1).decode() if found else ""
    name = ""
    for i, child in enumerate(node.children):  # @interface Name (Category), @protocol Name
        if child.type == "identifier" and (not name or _field(node, i) == "category"):
            claimed.add(_span(child))
            name = name or _text(child)
    return name


def _selector(
    node: Node, claimed: set[tuple[int, int]], keyword: Callable[[Node, int], bool]
) -> str:
    """`doThing:with:` from a method's keywords and parameters, or a message's."""
    parts: list[str] = []
    for i, child in enumerate(node.children):
        if child.type == "method_parameter":
            parts.append(":")
            claimed.update(_span(c) for c in child.children if c.type == "identifier")
        elif child.type == ":" and parts and node.type == "message_expression":
            parts.append(":")
        elif child.type == "identifier" and keyword(child, i):
            parts.append(_text(child))
            claimed.add(_span(child))
    return "".join(parts)


def _field(node: Node, index: int) -> str | None:
    return node.field_name_for_child(index)


def _span(node: Node) -> tuple[int, int]:
    return (node.start_byte, node.end_byte)


def _scoped(
    defs: list[tuple[Node, str, str]],
    uses: list[tuple[Node, str, str, str]],
    aliases: dict[str, str],
) -> list[Reference]:
    """Records in source order, each with its enclosing declaration: one sweep with a stack
    of the declarations open at the current byte."""
    events = [(d.start_byte, -d.end_byte, 0, i) for i, (d, _, _) in enumerate(defs)]
    events += [(u[0].start_byte, -u[0].end_byte, 1, i) for i, u in enumerate(uses)]
    events.sort()
    # End byte, kind, name and qualified name (`Type.method`) of the declarations open here.
    stack: list[tuple[int, str, str, str]] = []
    out: list[Reference] = []
    for start, _, is_use, i in events:
        while stack and stack[-1][0] <= start:
            stack.pop()
        if is_use:
            node, role, qualifier, name = uses[i]
            if role != "import":
                name = aliases.get(name, name)
            scope = stack[-1][3] if stack else ""
            out.append(_record(node, name, role, "", scope, qualifier))
            continue
        node, kind, name = defs[i]
        container = next((n for _, k, n, _ in reversed(stack) if k in TYPE_KINDS), "")
        if kind in ("interface", "implementation") and node.child_by_field_name("category"):
            kind = "category"
        out.append(_record(node, name, DEFINITION, kind, container, ""))
        qualified = f"{container}.{name}" if container and kind not in TYPE_KINDS else name
        stack.append((node.end_byte, kind, name, qualified))
    return [r for r in out if r.name]


def _record(node: Node, name: str, role: str, kind: str, scope: str, qual: str) -> Reference:
    return Reference(
        name, role, node.start_point.row + 1, node.end_point.row + 1, kind, scope, qual
    )


def attach(pieces: list[Piece], refs: list[Reference]) -> None:
    """Give each piece the records that start on its lines (pieces are in line order and do
    not overlap; a record outside every piece is dropped)."""
    starts = [p.start_line or 0 for p in pieces]
    for ref in refs:
        at = bisect_right(starts, ref.line) - 1
        if at >= 0 and ref.line <= (pieces[at].end_line or 0):
            pieces[at].references.append(ref)
