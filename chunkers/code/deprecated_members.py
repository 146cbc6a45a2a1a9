"""Deprecated members of a container, on the pieces that hold them, for every tree-sitter
language: Objective-C's and C's SDK macros (`API_DEPRECATED(...)`, `NS_DEPRECATED_IOS(...)`)
and Swift's `@available(*, deprecated)` / `@available(iOS, deprecated: 16.0)` alike.

A piece is tagged from its declaration's own attributes (chunkers.tagging.tags), so a
method deprecated inside a class said nothing about the class's piece. The rules:

* A piece holding deprecated members among live ones stays live: a user who leaves
  deprecated APIs out (the default for a target iOS version) still needs the class and
  its live members. It lists the deprecated ones in `metadata["deprecated_members"]`.
* A part of a split container holding deprecated members only is itself deprecated: the
  members' availability attributes join its attributes, which is what tagging reads.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Protocol

from tree_sitter import Node

from chunkers.code.units import Unit
from chunkers.model import Piece
from chunkers.tagging.availability import attribute_availability

# The fields key (next to symbol, kind, ...) the chunker fills for a container with
# deprecated members: member name -> that member's availability attributes.
DEPRECATED_MEMBERS = "deprecated_members"


class MemberSyntax(Protocol):
    """What finding deprecated members asks of a language's grammar."""

    # One of these is in the bytes of every container with a deprecated member: most
    # containers have none, and a search of their bytes is far cheaper than their members.
    deprecation_hints: tuple[bytes, ...]

    def members(self, node: Node, data: bytes) -> list[Unit] | None: ...

    def member_name(self, node: Node, data: bytes) -> str | None: ...

    def member_availability(self, node: Node, data: bytes) -> list[str]:
        """A member's availability attributes or macros, as written (spaces collapsed)."""
        ...


def is_deprecation(attribute: str) -> bool:
    """Whether an availability attribute deprecates what it is attached to, as tagging
    reads it: an SDK macro named so (`API_DEPRECATED(...)`, `NS_DEPRECATED_IOS(2_0, 9_0)`,
    `__IOS_DEPRECATED(...)`), or an `@available` that deprecates on some platform or
    everywhere (`@available(*, unavailable)` included, see chunkers.tagging.availability)."""
    if attribute.startswith("@available"):
        found = attribute_availability([attribute])
        return found.deprecated or any("deprecated_in" in b for b in found.platforms.values())
    return "DEPRECATED" in attribute.split("(", 1)[0]


def deprecated_members(syntax: MemberSyntax, node: Node, data: bytes) -> dict[str, list[str]]:
    """Member name -> its availability attributes, for the named members of the container
    `node` that one of them deprecates; empty for a declaration that is no container.

    Parts name their members by name alone, and Swift overloads share one (`signOut()`,
    `signOut(everywhere:)`): a name some live member also has is left out, so that no part
    holding the live overload is tagged deprecated."""
    start, end = node.start_byte, node.end_byte
    for hint in syntax.deprecation_hints:  # a loop: a generator would cost more than the find
        if data.find(hint, start, end) >= 0:
            break
    else:
        return {}
    found: dict[str, list[str]] = {}
    live: set[str] = set()
    for unit in syntax.members(node, data) or ():
        name = syntax.member_name(unit.node, data) if unit.main else None
        if name is None:
            continue
        attributes = syntax.member_availability(unit.node, data)
        if any(is_deprecation(a) for a in attributes):
            found[name] = attributes
        else:
            live.add(name)
    return {name: attributes for name, attributes in found.items() if name not in live}


def mark_pieces(
    pieces: list[Piece],
    deprecated: Mapping[str, list[str]],
    names_in: Callable[[Piece], list[str]],
) -> None:
    """Record the deprecated members on `pieces`: every one on a single piece, else on each
    part those among `names_in(part)` (the members the part holds)."""
    if len(pieces) == 1:
        pieces[0].metadata[DEPRECATED_MEMBERS] = list(deprecated)
        return
    for piece in pieces:
        names = names_in(piece)
        dead = [name for name in names if name in deprecated]
        if not dead:
            continue
        piece.metadata[DEPRECATED_MEMBERS] = dead
        if len(dead) == len(names):
            piece.attributes += [m for name in dead for m in deprecated[name]]
