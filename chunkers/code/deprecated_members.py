"""Deprecated members of a container, on the pieces that hold them.

A piece is tagged from its declaration's own attributes (chunkers.tagging.tags), so a
method deprecated inside a class said nothing about the class's piece. The rules:

* A piece holding deprecated members among live ones stays live: a user who leaves
  deprecated APIs out (the default for a target iOS version) still needs the class and
  its live members. It lists the deprecated ones in `metadata["deprecated_members"]`.
* A part of a split container holding deprecated members only is itself deprecated: the
  members' availability macros join its attributes, which is what tagging reads.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from chunkers.model import Piece

# The fields key (next to symbol, kind, ...) a Syntax fills for a container with
# deprecated members: member name -> that member's availability macros.
DEPRECATED_MEMBERS = "deprecated_members"


def is_deprecation(macro: str) -> bool:
    """Whether an availability macro (`API_DEPRECATED(...)`, `NS_DEPRECATED_IOS(2_0, 9_0)`,
    `__IOS_DEPRECATED(...)`) deprecates what it is attached to."""
    return "DEPRECATED" in macro.split("(", 1)[0]


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
