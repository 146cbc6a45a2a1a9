"""Sibling syntax nodes grouped into units: a declaration or member with the comments directly
above it, or a lone comment or statement. Shared by every tree-sitter language; what counts as
a comment, a doc comment or a closing token comes from the language's `CommentRules`."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from tree_sitter import Node

# What `bytes.strip()` leaves as `;`, matched in place instead of copying the node's bytes.
_EMPTY_STATEMENT = re.compile(rb"\s*;\s*")
# The bytes such a statement can start with: the pattern is tried only on nodes that do, as
# nearly every node starts with a word or a bracket and matching is dearer than a lookup.
_EMPTY_STATEMENT_FIRST = frozenset(b" \t\n\r\f\v;")


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


@dataclass(slots=True)
class Unit:
    start: int  # byte offset, including attached comments
    end: int
    node: Node
    main: bool  # a declaration (top level) or a member (type body)
    # The unit's last node (a comment trailing on its line, a closer that joined it): its
    # row is read only when a comment may trail it, so it is kept rather than computed.
    last: Node
    comment: bool = False  # a lone comment
    above: Sequence[Node] = ()  # the comments attached above the node
    container: str | None = None  # the namespace or module the unit was found in

    @property
    def last_row(self) -> int:
        """Row of the unit's last byte, to attach comments trailing on the same line."""
        return last_row(self.last)


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
                    units[-1].end, units[-1].last = node.end_byte, node
            else:
                pending.append(node)
            continue
        if kind in attached_types:
            pending.append(node)
            continue
        # An empty statement (`;` alone, as after a struct's `}` the parser split off) ends
        # what precedes it, like a closer: a piece of its own would be one character.
        start, end = node.start_byte, node.end_byte
        if units and (kind in closers or _is_empty_statement(data, start, end)):
            units += [_lone(c, rules) for c in pending]
            pending = []
            units[-1].end, units[-1].last = end, node
            continue
        main = is_main(node)
        attached = _attached(pending, node, data, rules) if main and pending else 0
        if pending:
            cut = len(pending) - attached
            units += [_lone(c, rules) for c in pending[:cut]]
            above: Sequence[Node] = pending[cut:]
            if above:
                start = above[0].start_byte
        else:
            above = ()
        units.append(Unit(start, end, node, main, node, False, above))
        pending = []
    return units + [_lone(c, rules) for c in pending]


def _is_empty_statement(data: bytes, start: int, end: int) -> bool:
    return (
        start < end
        and data[start] in _EMPTY_STATEMENT_FIRST
        and (_EMPTY_STATEMENT.fullmatch(data, start, end) is not None)
    )


def _lone(node: Node, rules: CommentRules) -> Unit:
    return Unit(node.start_byte, node.end_byte, node, False, node, node.type in rules.types)


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


def doc_line(comments: Sequence[Node], data: bytes, rules: CommentRules) -> str | None:
    """The first line of text of a doc comment among `comments` (markers stripped), as
    Python's chunker records a docstring's first line."""
    for comment in comments:
        if not rules.is_doc(comment, data):
            continue
        text = data[comment.start_byte : comment.end_byte].decode("utf-8", "replace")
        for line in text.splitlines():
            cleaned = line.strip().lstrip("/*!#").rstrip("*/").strip()
            if cleaned:
                return cleaned
    return None
