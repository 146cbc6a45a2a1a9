"""What tree-sitter-swift says about a Swift file: which top-level nodes are declarations,
which comments belong to them, and each declaration's kind, name, attributes and signature.

`SWIFT` is the `Syntax` that `chunkers.code.declarations` cuts Swift source with; nothing
here counts tokens or makes pieces.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from tree_sitter import Language, Node, Parser

from chunkers.code.references import Reference, extract, query_for
from chunkers.code.syntax import OTHER_KIND
from chunkers.code.units import CommentRules, Unit, doc_line, sibling_units

# What tree-sitter-swift 0.7.4 produces for each top-level declaration (checked by parsing
# samples of each, see tests/chunkers/test_swift_chunker.py). Types share one node type and differ in
# the anonymous keyword child held by the `declaration_kind` field.
#
#   class / struct / enum / extension / actor   class_declaration, keyword child of that name
#                                               (`indirect enum`, `distributed actor`, `final
#                                               class` add modifiers, not other node types)
#   protocol                                    protocol_declaration
#   func (also operator functions `func +`)     function_declaration
#   typealias                                   typealias_declaration
#   let / var (stored, computed, observed)      property_declaration, `let` or `var` in its
#                                               value_binding_pattern
#   macro                                       macro_declaration
#   prefix/infix/postfix operator               operator_declaration
#   precedencegroup                             precedence_group_declaration
#
# Not declarations: import_declaration, directive (`#if`, `#endif`), comment (`//`, `///`),
# multiline_comment (`/* */`, `/** */`), macro_invocation (`#Preview { }`), statements
# (call_expression, ...) and ERROR nodes.
DECLARATION_KINDS: dict[str, str | None] = {
    "class_declaration": None,  # from the keyword: class, struct, enum, extension, actor
    "protocol_declaration": "protocol",
    "function_declaration": "function",
    "typealias_declaration": "typealias",
    "property_declaration": None,  # constant (let) or variable (var)
    "macro_declaration": "macro",
    "operator_declaration": "operator",
    "precedence_group_declaration": "precedencegroup",
}
TYPE_KEYWORDS = frozenset({"class", "struct", "enum", "extension", "actor"})
# Bodies whose children are members; a type over the hard limit is split between them.
MEMBER_BODIES = frozenset({"class_body", "enum_class_body", "protocol_body"})
# Members named in the parts of a split type (a member without a name field has none).
MEMBER_NAMES = frozenset(DECLARATION_KINDS) | {"protocol_function_declaration", "init_declaration"}


_COMMENTS = frozenset({"comment", "multiline_comment"})
_OPENING_DIRECTIVES = frozenset({"#if", "#elseif", "#else"})
# Where a declaration's signature ends: the first child of one of these types.
_SIGNATURE_ENDS = frozenset(
    {
        "class_body",
        "enum_class_body",
        "protocol_body",
        "function_body",
        "computed_property",
        "willset_didset_block",
        "macro_definition",
        "=",
        "{",
    }
)
_WHOLE_SIGNATURE = frozenset({"typealias_declaration", "operator_declaration"})
_SIGNATURE_CHARS = 400


@lru_cache(maxsize=1)
def _language() -> Language:
    import tree_sitter_swift

    return Language(tree_sitter_swift.language())


def parser() -> Parser:
    # A parser is cheap and not thread-safe, so each call gets its own.
    return Parser(_language())


# --- grouping nodes into units -------------------------------------------------------------

COMMENTS = CommentRules(types=_COMMENTS, doc_prefixes=(b"///", b"/**"))


def is_declaration(node: Node) -> bool:
    return node.type in DECLARATION_KINDS


def is_member(node: Node) -> bool:
    return node.type not in _COMMENTS


# --- declarations: names, kinds, signatures --------------------------------------------------


def _node_text(node: Node, data: bytes) -> str:
    return data[node.start_byte : node.end_byte].decode("utf-8")


def _kind(node: Node) -> str:
    if node.type == "class_declaration":
        keyword = node.child_by_field_name("declaration_kind")
        return keyword.type if keyword is not None and keyword.type in TYPE_KEYWORDS else "class"
    if node.type == "property_declaration":
        binding = _first_child(node, "value_binding_pattern")
        return "constant" if binding is not None and binding.text == b"let" else "variable"
    return DECLARATION_KINDS.get(node.type) or OTHER_KIND


def _first_child(node: Node, node_type: str) -> Node | None:
    for child in node.children:
        if child.type == node_type:
            return child
    return None


def _symbol(node: Node, data: bytes) -> str | None:
    if node.type == "property_declaration":
        names = _property_names(node, data)
        return names[0] if names else None
    if node.type == "operator_declaration":
        kids = node.children
        for i, child in enumerate(kids[:-1]):
            if child.type == "operator":
                return _node_text(kids[i + 1], data)
        return None
    name = node.child_by_field_name("name")
    if name is None:
        name = _first_child(node, "simple_identifier")
    if name is None:
        return None
    if name.type == "user_type":
        # `extension Foo.Bar<T>`: the extended type is the dotted name without arguments.
        parts = [_node_text(c, data) for c in name.children if c.type == "type_identifier"]
        if parts:
            return ".".join(parts)
    return _node_text(name, data)


def _property_names(node: Node, data: bytes) -> list[str]:
    return [_node_text(c, data) for c in node.children if c.type == "pattern"]


def _attributes(node: Node, data: bytes) -> list[str]:
    found: list[str] = []
    for child in node.children:
        holders = child.children if child.type == "modifiers" else [child]
        found += [" ".join(_node_text(a, data).split()) for a in holders if a.type == "attribute"]
    return found


def _header(node: Node, data: bytes) -> str:
    """The declaration up to its body or value, without doc comments: what tells a reader
    which type a member belongs to. Lines are kept, trailing blanks dropped."""
    end = node.end_byte
    if node.type not in _WHOLE_SIGNATURE:
        for child in node.children:
            if child.type in _SIGNATURE_ENDS:
                end = child.start_byte
                break
    text = data[node.start_byte : end].decode("utf-8")
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


def declaration_fields(node: Node, data: bytes) -> dict[str, Any]:
    header = _header(node, data)
    metadata: dict[str, Any] = {"signature": " ".join(header.split())[:_SIGNATURE_CHARS]}
    if node.type == "property_declaration" and len(names := _property_names(node, data)) > 1:
        metadata["names"] = names
    return {
        "symbol": _symbol(node, data),
        "kind": _kind(node),
        "attributes": _attributes(node, data),
        "metadata": metadata,
        "header": header,
    }


def imported_modules(root: Node) -> list[str]:
    """Module names of the file's imports, in order: `import struct Foundation.Date` imports
    from Foundation; `import os.log` names the submodule."""
    modules: list[str] = []
    for node in root.children:
        if node.type != "import_declaration":
            continue
        name = _first_child(node, "identifier")
        if name is None or name.text is None:
            continue
        module = name.text.decode("utf-8", "replace")
        # `import struct M.Name`: an anonymous keyword after `import` says the path ends in a
        # declaration, not a submodule.
        kinded = any(not c.is_named and c.type != "import" for c in node.children)
        modules.append(module.split(".")[0] if kinded else module)
    return list(dict.fromkeys(modules))


# --- preprocessor directives ----------------------------------------------------------------


def joins_previous(prev: Unit, unit: Unit) -> bool:
    """Keep `#if`/`#else` with the code they guard, and `#endif` with the code it closes."""
    return _directive(unit.node) == "#endif" or _directive(prev.node) in _OPENING_DIRECTIVES


def _directive(node: Node) -> str | None:
    if node.type != "directive" or node.child_count == 0:
        return None
    return node.children[0].type


class SwiftSyntax:
    """tree-sitter-swift as `chunkers.code.syntax.Syntax`."""

    # What an `@available` that deprecates holds (deprecated_members.is_deprecation).
    deprecation_hints: tuple[bytes, ...] = (b"deprecated", b"unavailable")

    def parse(self, data: bytes) -> Node:
        return parser().parse(data).root_node

    def top_units(self, root: Node, data: bytes) -> list[Unit]:
        return sibling_units(root.children, data, is_declaration, COMMENTS)

    def imports(self, root: Node, data: bytes) -> list[str]:
        return imported_modules(root)

    def fields(self, node: Node, data: bytes) -> dict[str, Any]:
        return declaration_fields(node, data)

    def members(self, node: Node, data: bytes) -> list[Unit] | None:
        body = node.child_by_field_name("body")
        if body is None or body.type not in MEMBER_BODIES:
            return None
        inner = [c for c in body.children if c.type not in ("{", "}")]
        return sibling_units(inner, data, is_member, COMMENTS, opening_row=body.start_point.row)

    def member_name(self, node: Node, data: bytes) -> str | None:
        return _symbol(node, data) if node.type in MEMBER_NAMES else None

    def member_availability(self, node: Node, data: bytes) -> list[str]:
        return [a for a in _attributes(node, data) if a.startswith("@available")]

    def joins_previous(self, prev: Unit, unit: Unit) -> bool:
        return joins_previous(prev, unit)

    def docstring(self, unit: Unit, data: bytes) -> str | None:
        return doc_line(unit.above, data, COMMENTS)

    def references(self, root: Node) -> list[Reference]:
        return extract(root, query_for(_language(), "swift"))


SWIFT = SwiftSyntax()
