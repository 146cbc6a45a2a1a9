"""Sibling syntax nodes grouped into units: a declaration or member with the comments directly
above it, or a lone comment or statement. Shared by every tree-sitter language; what counts as
a comment, a doc comment or a closing token comes from the language's `CommentRules`."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from tree_sitter import Node

# What `bytes.strip()` leaves as `;`, matched in place instead of copying the node's bytes.
_EMPTY_STATEMENT = re.compile(rb"\s*;\s*")


@dataclass(frozen=True)
class CommentRules:
    types: frozenset[str]  # comment node types
    # A comment starting with one of these documents what follows, even one blank line away.
    doc_prefixes: tuple[bytes, ...]
    # Nodes that belong to the declaration below them, as comments do (Rust's `#[derive]`).
    attached: frozenset[str] = frozenset()
    # Tokens that close what precedes them (`}` and `#endif` of a container whose contents
    # are planned one by one): they join the unit before them instead of standing alone.
    closers: frozenset[str] = frozenset()

    def is_doc(self, node: Node, data: bytes) -> bool:
        text = data[node.start_byte : node.end_byte]
        return text.startswith(self.doc_prefixes) and text != b"/**/"


@dataclass
class Unit:
    start: int  # byte offset, including attached comments
    end: int
    node: Node
    main: bool  # a declaration (top level) or a member (type body)
    last_row: int  # row of the last byte, to attach comments trailing on the same line
    comment: bool = False  # a lone comment
    above: list[Node] = field(default_factory=list)  # the comments attached above the node
    container: str | None = None  # the namespace or module the unit was found in

    @property
    def is_comment(self) -> bool:
        return self.comment


def last_row(node: Node) -> int:
    """Row of the node's last character: a line comment that ends with its newline ends on
    the row before the one tree-sitter reports."""
    end = node.end_point
    return end.row - 1 if end.column == 0 and end.row > node.start_point.row else end.row


def sibling_units(
    children: list[Node],
    data: bytes,
    is_main: Callable[[Node], bool],
    rules: CommentRules,
    opening_row: int = -1,
) -> list[Unit]:
    """Group sibling nodes: comments directly above a main node join it, a comment on the
    same line after a unit joins that unit, everything else stands alone. A comment on the
    `opening_row` (the line of a body's `{`) before any unit belongs to what opened it, so
    it is left out."""
    units: list[Unit] = []
    pending: list[Node] = []  # comments (and attached nodes) on their own lines, not yet placed
    comments, attached_types, closers = rules.types, rules.attached, rules.closers
    for node in children:
        kind = node.type  # each read of a node's fields builds a new Python object
        if kind in comments:
            row = units[-1].last_row if units else opening_row
            if not pending and node.start_point.row == row:
                if units:
                    units[-1].end, units[-1].last_row = node.end_byte, last_row(node)
            else:
                pending.append(node)
            continue
        if kind in attached_types:
            pending.append(node)
            continue
        # An empty statement (`;` alone, as after a struct's `}` the parser split off) ends
        # what precedes it, like a closer: a piece of its own would be one character.
        end = node.end_byte
        if units and (kind in closers or _EMPTY_STATEMENT.fullmatch(data, node.start_byte, end)):
            units += [_lone(c, rules) for c in pending]
            pending = []
            units[-1].end, units[-1].last_row = end, last_row(node)
            continue
        main = is_main(node)
        attached = _attached(pending, node, data, rules) if main and pending else 0
        if pending:
            cut = len(pending) - attached
            units += [_lone(c, rules) for c in pending[:cut]]
            above = pending[cut:]
        else:
            above = []
        start = above[0].start_byte if above else node.start_byte
        units.append(Unit(start, end, node, main, last_row(node), above=above))
        pending = []
    return units + [_lone(c, rules) for c in pending]


def _lone(node: Node, rules: CommentRules) -> Unit:
    return Unit(
        node.start_byte, node.end_byte, node, False, last_row(node), node.type in rules.types
    )


def _attached(comments: list[Node], node: Node, data: bytes, rules: CommentRules) -> int:
    """How many of the trailing `comments` sit directly above `node`: no blank line between
    them, except that a doc comment right above the declaration may be one blank line away."""
    count, below = 0, node.start_byte
    for comment in reversed(comments):
        between = data[comment.end_byte : below]
        allowed = 2 if count == 0 and rules.is_doc(comment, data) else 1
        if data[comment.end_byte - 1 : comment.end_byte] == b"\n":
            allowed -= 1  # the comment's own newline is not in `between`
        if between.strip(b" \t\r\n;") or between.count(b"\n") > allowed:
            break
        count, below = count + 1, comment.start_byte
    return count


def doc_line(comments: list[Node], data: bytes, rules: CommentRules) -> str | None:
    """The first line of text of a doc comment among `comments` (markers stripped), as
    Python's chunker records a docstring's first line."""
    docs = [c for c in comments if rules.is_doc(c, data)]
    for comment in docs:
        text = data[comment.start_byte : comment.end_byte].decode("utf-8", "replace")
        for line in text.splitlines():
            cleaned = line.strip().lstrip("/*!#").rstrip("*/").strip()
            if cleaned:
                return cleaned
    return None
