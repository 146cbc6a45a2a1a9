"""What the declaration chunker (`chunkers.code.declarations`) asks of a language's grammar:
Swift's answers are in `chunkers.code.swift_syntax`, every other language's in a row of
`chunkers.code.grammar_table` read by `chunkers.code.grammar_syntax`."""

from __future__ import annotations

from typing import Any, Protocol

from tree_sitter import Node

from chunkers.code.references import Reference
from chunkers.code.units import Unit

OTHER_KIND = "other"  # the kind of code that declares nothing (imports, statements)


class Syntax(Protocol):
    """What the chunker asks of a language's grammar."""

    def parse(self, data: bytes) -> Node: ...

    def top_units(self, root: Node, data: bytes) -> list[Unit]:
        """The file's top-level units, in order (`main` ones are declarations)."""
        ...

    def imports(self, root: Node, data: bytes) -> list[str]: ...

    def fields(self, node: Node, data: bytes) -> dict[str, Any]:
        """symbol, kind, attributes, metadata (with the signature) and header."""
        ...

    def members(self, node: Node, data: bytes) -> list[Unit] | None:
        """A container's member units; None for a declaration that is no container."""
        ...

    def member_name(self, node: Node, data: bytes) -> str | None:
        """The name of a container's member (a method, property, case), or None."""
        ...

    deprecation_hints: tuple[bytes, ...]  # see chunkers.code.deprecated_members

    def member_availability(self, node: Node, data: bytes) -> list[str]:
        """A member's availability attributes or macros, as written (spaces collapsed)."""
        ...

    def joins_previous(self, prev: Unit, unit: Unit) -> bool: ...

    def docstring(self, unit: Unit, data: bytes) -> str | None: ...

    def references(self, root: Node) -> list[Reference]:
        """What the file declares and uses (chunkers.code.references), [] when the language
        has no query file."""
        ...
