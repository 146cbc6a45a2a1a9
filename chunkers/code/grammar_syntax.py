"""A row of `chunkers.code.grammar_table` as the `Syntax` that `chunkers.code.declarations`
cuts source with: names, kinds, signatures, members and imports read from the row, the
few things the table cannot say (an Objective-C selector, a C prototype) decided here.

Parse errors never cost lines: an ERROR node is planned through like a transparent node,
so the declarations tree-sitter still recognised inside it keep their pieces and the rest
becomes `other` code; a file with nothing recognisable falls back to line windows.
"""

from __future__ import annotations

import importlib
import re
import threading
from functools import cache
from typing import Any

from tree_sitter import Language, Node, Parser

from chunkers.code.declarations import chunk_source
from chunkers.code.grammar_table import LANGUAGE_SPECS, LanguageSpec
from chunkers.code.references import Reference, extract, query_for
from chunkers.code.syntax import OTHER_KIND
from chunkers.code.units import Unit, doc_line, sibling_units
from chunkers.config import ChunkConfig
from chunkers.model import Piece
from chunkers.tagging.objc_availability import availability_macros

_SIGNATURE_CHARS = 400
# Where a name is found in C declarators (`*const name`, `name(args)`, `Type::name`).
_NAMES = frozenset(
    {
        "identifier",
        "field_identifier",
        "type_identifier",
        "qualified_identifier",
        "destructor_name",
        "operator_name",
        "constant",
        "word",
        "simple_identifier",
        "property_identifier",
    }
)
# Nodes that hold the name of what a declaration declares, one level down.
_NAME_HOLDERS = frozenset(
    {"type_spec", "var_spec", "const_spec", "variable_declarator", "init_declarator"}
)
_REQUIRES = frozenset({"require", "require_relative", "load"})
_OBJC_METHODS = frozenset({"method_declaration", "method_definition", "implementation_definition"})
_OBJC_CLASSES = frozenset({"class_interface", "class_implementation"})
# A node of the flattened top level: the node, its type, and the container it was found in.
_Flat = tuple[Node, str, str | None]


def chunk_code(text: str, cfg: ChunkConfig, language: str) -> list[Piece]:
    """Cut source of one of `LANGUAGE_SPECS` into pieces (see `chunkers.code.declarations`)."""
    return chunk_source(text, cfg, syntax_for(language))


@cache
def syntax_for(language: str) -> TableSyntax:
    return TableSyntax(LANGUAGE_SPECS[language])


@cache
def _language(module: str, function: str) -> Language:
    return Language(getattr(importlib.import_module(module), function)())


class TableSyntax:
    # Every SDK macro that deprecates says so in its name (deprecated_members.is_deprecation).
    deprecation_hints: tuple[bytes, ...] = (b"DEPRECATED",)

    def __init__(self, spec: LanguageSpec) -> None:
        self.spec = spec
        self._last = threading.local()
        self._header_ends = spec.signature_ends | spec.comments.types

    def parser(self) -> Parser:
        # A parser is cheap and not thread-safe, so each parse gets its own.
        return Parser(_language(*self.spec.grammar))

    def parse(self, data: bytes) -> Node:
        for pattern in self.spec.masks:
            data = pattern.sub(_masked, data)
        return self.parser().parse(data).root_node

    # --- units ---------------------------------------------------------------------------

    def top_units(self, root: Node, data: bytes) -> list[Unit]:
        """Sibling units, with transparent nodes (and parse errors) replaced by what they
        hold: what they declare is planned one by one, their own lines are `other` code."""
        flat = self._top_level(root, data)
        nodes = [n for n, _, _ in flat]
        units = sibling_units(nodes, data, self.is_declaration, self.spec.comments)
        if containers := {node.id: container for node, _, container in flat if container}:
            for unit in units:
                unit.container = containers.get(unit.node.id)
        return units

    def _top_level(self, root: Node, data: bytes) -> list[_Flat]:
        """`_flat` of the root's children, walked once per parse: the imports and the units
        both read it. The last walk is kept per thread (a syntax serves every thread), with
        its root, which keeps that root's id from being reused while it is kept."""
        last = getattr(self._last, "walk", None)
        if last is not None and last[0] is root and last[1] is data:
            return last[2]
        flat = self._flat(root.children, data, None)
        self._last.walk = (root, data, flat)
        return flat

    def _flat(self, children: list[Node], data: bytes, container: str | None) -> list[_Flat]:
        out: list[_Flat] = []
        transparent = self.spec.transparent
        for node in children:
            kind = node.type  # built anew on every read, so kept for the imports
            if kind != "ERROR" and (kind not in transparent or not self._is_transparent(node)):
                out.append((node, kind, container))
                continue
            # Namespaces and modules name what they hold; include guards and errors do not.
            named = kind != "ERROR" and not kind.startswith("preproc")
            name = self._name(node, data) if named else None
            inner = f"{container}::{name}" if container and name else name or container
            out += self._flat(self._flattened(node), data, inner)
        return out

    def _is_transparent(self, node: Node) -> bool:
        if node.type == "ERROR":
            return True
        if node.type not in self.spec.transparent:
            return False
        return node.type != "mod_item" or node.child_by_field_name("body") is not None

    def _flattened(self, node: Node) -> list[Node]:
        body = node.child_by_field_name("body")
        if body is None:  # include guards and `#if`: their children are what they hold
            return node.children
        out: list[Node] = []
        for child in node.children:
            if child == body:
                out += child.children
            else:
                out.append(child)
        return out

    def is_declaration(self, node: Node) -> bool:
        kind = node.type  # most nodes are answered here, without reading it again below
        if kind in self.spec.declarations:
            return True
        return kind in self.spec.wrappers and self._declared(node) is not None

    def _declared(self, node: Node) -> Node | None:
        """The declaration a node is or wraps (`export function f`), or None."""
        kind = node.type  # built anew on every read
        if kind in self.spec.wrappers:
            inner = node.child_by_field_name("declaration")
            if inner is None:
                named = [c for c in node.named_children if c.type in self.spec.declarations]
                inner = named[-1] if named else None
            return self._declared(inner) if inner is not None else None
        return node if kind in self.spec.declarations else None

    def members(self, node: Node, data: bytes) -> list[Unit] | None:
        declared = self._declared(node)
        if declared is None:
            return None
        if declared.type in self.spec.self_bodies:
            kids = declared.children
            first = next((i for i, c in enumerate(kids) if self._ends_header(c)), len(kids))
            inner = [c for c in kids[first:] if c.type != "@end"]
            row = kids[first - 1].end_point.row if first else -1
        else:
            body = self._body(declared)
            if body is None:
                return None
            inner = [c for c in body.children if c.type not in ("{", "}")]
            row = body.start_point.row
        return sibling_units(inner, data, self._is_member, self.spec.comments, opening_row=row)

    def _is_member(self, node: Node) -> bool:
        return node.type not in self.spec.comments.types

    def _body(self, node: Node) -> Node | None:
        body = node.child_by_field_name("body")
        if body is not None and body.type in self.spec.bodies:
            return body
        return next((c for c in node.children if c.type in self.spec.bodies), None)

    def _ends_header(self, node: Node) -> bool:
        return node.type in self._header_ends

    def member_name(self, node: Node, data: bytes) -> str | None:
        if node.type in _OBJC_METHODS and self.spec.self_bodies:
            method = _first_named(node, "method_definition") or node
            return _selector(method, data)
        if node.type in self.spec.comments.types:
            return None
        return self._name(node, data)

    def joins_previous(self, prev: Unit, unit: Unit) -> bool:
        return False

    def docstring(self, unit: Unit, data: bytes) -> str | None:
        return doc_line(unit.above, data, self.spec.comments)

    def references(self, root: Node) -> list[Reference]:
        if not self.spec.references:
            return []
        return extract(root, query_for(_language(*self.spec.grammar), self.spec.references))

    # --- declarations ----------------------------------------------------------------------

    def fields(self, node: Node, data: bytes) -> dict[str, Any]:
        declared = self._declared(node) or node
        header = self._header(node, declared, data)
        metadata: dict[str, Any] = {"signature": " ".join(header.split())[:_SIGNATURE_CHARS]}
        return {
            "symbol": self._symbol(declared, data),
            "kind": self._kind(declared),
            "attributes": availability_macros(header),
            "metadata": metadata,
            "header": header,
        }

    def member_availability(self, node: Node, data: bytes) -> list[str]:
        return availability_macros(self._header(node, node, data))

    def _header(self, node: Node, declared: Node, data: bytes) -> str:
        """The declaration up to its body or value (from the wrapper's start: `export`,
        `template <...>`), lines kept, trailing blanks dropped."""
        begin, end = declared.start_byte, declared.end_byte
        ends = self._header_ends
        for child in declared.children:
            if child.type in ends and child.start_byte > begin:
                end = child.start_byte
                break
        if end == declared.end_byte:  # no body: the header may end at a value
            declarator = declared.child_by_field_name("declarator")
            value = declarator.child_by_field_name("value") if declarator is not None else None
            if value is not None:  # `int x = ...;`
                end = value.start_byte
        lines = data[node.start_byte : end].decode("utf-8", "replace").strip().splitlines()
        if len(lines) == 1:  # most headers; strip() already took its trailing blanks
            return lines[0]
        return "\n".join(line.rstrip() for line in lines)

    def _kind(self, node: Node) -> str:
        node_type = node.type
        kind = self.spec.declarations.get(node_type, OTHER_KIND)
        if node_type == "declaration" and _has_descendant(node, "function_declarator"):
            return "function"
        if node_type == "lexical_declaration":
            declarator = _first_named(node, "variable_declarator")
            value = declarator.child_by_field_name("value") if declarator else None
            if value is not None and value.type in ("arrow_function", "function_expression"):
                return "function"
            return "constant" if node.children and node.children[0].type == "const" else kind
        if node_type == "type_definition":
            inner = node.child_by_field_name("type")
            if inner is not None and self._body(inner) is not None:
                return self.spec.declarations.get(inner.type, kind)
        if node_type == "type_declaration":
            spec = _first_named(node, "type_spec")
            inner = spec.child_by_field_name("type") if spec else None
            if inner is not None and inner.type in ("struct_type", "interface_type"):
                return inner.type.removesuffix("_type")
        if node_type == "class_declaration" and any(c.type == "interface" for c in node.children):
            return "interface"  # Kotlin's `interface` shares the class node
        if node_type in _OBJC_CLASSES and any(c.type == "(" for c in node.children):
            # `@interface Name ()` and `@interface Name (Category)` parse as the class's own
            # node: they extend a class declared elsewhere, as Swift's extensions do.
            return "extension"
        return kind

    def _symbol(self, node: Node, data: bytes) -> str | None:
        if node.type == "impl_item":
            target = node.child_by_field_name("type")
            trait = node.child_by_field_name("trait")
            if target is not None and trait is not None:
                return f"{_text(trait, data)} for {_text(target, data)}"
            return _text(target, data) if target is not None else None
        return self._name(node, data)

    def _name(self, node: Node, data: bytes) -> str | None:
        """The declared name: the `name` field, else down the declarator chain or the first
        spec/declarator child, else the first identifier child."""
        name = node.child_by_field_name("name")
        if name is not None:
            return _text(name, data)
        if node.type == "type_definition":  # `typedef NS_ENUM(...) {...};` names no alias
            declarator = node.child_by_field_name("declarator")
            inner = node.child_by_field_name("type")
            if (declarator is None or not _text(declarator, data).strip()) and inner:
                return self._name(inner, data)
        current: Node | None = node
        while current is not None:
            declarator = current.child_by_field_name("declarator")
            if declarator is None:
                break
            if declarator.type in _NAMES:
                return _text(declarator, data)
            current = declarator
        for child in node.named_children:
            if child.type in _NAME_HOLDERS:
                return self._name(child, data)
        first = next((c for c in node.named_children if c.type in _NAMES), None)
        return _text(first, data) if first is not None else None

    # --- imports -----------------------------------------------------------------------------

    def imports(self, root: Node, data: bytes) -> list[str]:
        """Module names of the file's imports, in order: `#import <UIKit/UIKit.h>` imports
        the framework UIKit, `#include "x.h"` the file x.h, `import a.b.C` the name a.b.C."""
        found: list[str] = []
        kinds = self.spec.imports  # never transparent, so the flat top level holds them all
        for node, kind, _ in self._top_level(root, data):
            if kind in kinds:
                found += self._import_names(node, data)
        return list(dict.fromkeys(n for n in found if n))

    def _import_names(self, node: Node, data: bytes) -> list[str]:
        if node.type == "call":  # Ruby: only require and its kin import
            method = node.child_by_field_name("method")
            if method is None or _text(method, data) not in _REQUIRES:
                return []
        path = node.child_by_field_name("path") or node.child_by_field_name("source")
        if path is not None:
            return [_module(_text(path, data))]
        strings = _descendants(node, ("interpreted_string_literal", "string"))
        if strings:
            return [_module(_text(s, data)) for s in strings]
        named = [c for c in node.named_children if c.type not in self.spec.comments.types]
        return [_module(_text(named[0], data))] if named else []


def _module(text: str) -> str:
    text = text.strip().strip("\"'`;")
    if text.startswith("<") and text.endswith(">"):
        text = text[1:-1]
        # <Framework/Header.h>: the framework; <stdio.h>: the header.
        return text.split("/")[0] if "/" in text else text
    return text.removeprefix("@import").strip().strip(";")


def _masked(match: re.Match[bytes]) -> bytes:
    out = bytearray(b" " * (match.end() - match.start()))
    if "signature" in match.re.groupindex:
        head = match.group(0)
        lead = len(head) - len(head.lstrip())  # the indentation stays where it was
        out[lead : lead + 8] = b"- (void)"
        a, b = match.start("signature") - match.start(), match.end("signature") - match.start()
        out[a:b] = match["signature"]
        return bytes(out)
    if "name" in match.re.groupindex:
        out[0:4] = b"enum"
        a, b = match.start("name") - match.start(), match.end("name") - match.start()
        out[a:b] = match["name"]
    return bytes(out)


def _selector(node: Node, data: bytes) -> str:
    """`- (void)signInWithUser:(NSString *)u password:(NSString *)p` -> signInWithUser:password:"""
    parts: list[str] = []
    for child in node.children:
        if child.type == "identifier":
            parts.append(_text(child, data))
        elif child.type == "method_parameter" and parts and not parts[-1].endswith(":"):
            parts[-1] += ":"
        elif child.type in ("compound_statement", ";"):
            break
    return "".join(parts)


def _text(node: Node, data: bytes) -> str:
    return data[node.start_byte : node.end_byte].decode("utf-8", "replace")


def _first_named(node: Node, node_type: str) -> Node | None:
    return next((c for c in node.named_children if c.type == node_type), None)


def _has_descendant(node: Node, node_type: str) -> bool:
    """Whether `node_type` occurs below `node` outside function bodies; stops at the first."""
    stack = list(reversed(node.children))
    while stack:
        current = stack.pop()
        kind = current.type
        if kind == node_type:
            return True
        if kind != "compound_statement":
            stack += reversed(current.children)
    return False


def _descendants(node: Node, types: tuple[str, ...]) -> list[Node]:
    found, stack = [], list(reversed(node.children))
    while stack:
        current = stack.pop()
        if current.type in types:
            found.append(current)
        else:
            stack += reversed(current.children)
    return found
