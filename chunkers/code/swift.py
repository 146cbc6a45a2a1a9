"""Swift source -> pieces: one per top-level declaration, with the code between them kept.

Rules:

* Every top-level declaration becomes a piece that starts at its leading comments (the
  comment lines directly above it; a `///` or `/** */` doc comment may also sit one blank
  line above) and ends at its last byte, plus a comment trailing on that same line.
  Attributes (`@MainActor`, `@available(...)`, property wrappers) are part of the declaration
  node in tree-sitter-swift, so they are always included.
* Everything else at the top level (imports, `#if`/`#endif`, statements, stray comments,
  `#Preview {}`, unparseable regions) becomes `other` pieces, packed up to the target, so
  every non-blank line of the file lands in some piece.
* A declaration is kept whole while it fits the hard limit (`cfg.max_tokens`): a type that
  fits stays one piece even above the target, because a whole type retrieves better than
  parts of it. A type over the hard limit is split at its members: consecutive members packed
  up to `cfg.target_tokens`, each part carrying the type's header as `context`. Anything
  still over the hard limit (a huge member, function or statement) falls back to
  token-bounded line windows, so no piece's content ever exceeds `cfg.max_tokens`.
* Work is done on the UTF-8 bytes tree-sitter reports offsets in; text is decoded per piece.
  Every span (a declaration, a member of a type planned in parts, a statement) is counted
  once, in one batch per file. Spans packed together are not counted again when the
  tokenizer is known to split at whitespace (counts then add up across the whitespace
  between spans; see `_additive_at_whitespace`); otherwise each packed group is counted.
  A type too big to be worth counting whole (see `_BYTES_PER_TOKEN`) is counted at its
  members straight away.
* Lone surrogates (which neither UTF-8 nor the tokenizer accept) become U+FFFD.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from tree_sitter import Language, Node, Parser

from chunkers.config import ChunkConfig
from chunkers.model import Piece
from chunkers.packing import pack_counts
from chunkers.spans import LineIndex
from chunkers.windows import line_windows

# What tree-sitter-swift 0.7.4 produces for each top-level declaration (checked by parsing
# samples of each, see tests/test_swift_chunker.py). Types share one node type and differ in
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
OTHER_KIND = "other"

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
# Swift code runs 3.5-4 UTF-8 bytes per token of the default model; a type with more bytes
# than this many per allowed token is planned at its members without counting it whole.
_BYTES_PER_TOKEN = 4
# Gaps made only of these (whitespace, `;`, a byte-order mark) hold no code worth a piece.
_BLANK = re.compile(rb"(?:[\s;]|\xef\xbb\xbf)*")
_NEWLINE = re.compile(rb"\n")
_SURROGATE = re.compile("[\ud800-\udfff]")


def chunk_swift(text: str, cfg: ChunkConfig) -> list[Piece]:
    """Cut Swift source into pieces of at most `cfg.max_tokens` tokens (see module doc)."""
    if not text.strip():
        return []
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        # Lone surrogates: neither UTF-8 nor the tokenizer takes them. One replacement
        # character each keeps every other character and every line where it was.
        text = _SURROGATE.sub("\ufffd", text)
        data = text.encode("utf-8")
    root = _parser().parse(data).root_node
    if root.type == "ERROR":  # nothing recognisable at all: plain line windows
        return _Source(data, cfg, []).windows(0, len(data), {"kind": OTHER_KIND})
    src = _Source(data, cfg, _imports(root))
    return _file_pieces(src, _units(root.children, data, _is_declaration))


@lru_cache(maxsize=1)
def _language() -> Language:
    import tree_sitter_swift

    return Language(tree_sitter_swift.language())


def _parser() -> Parser:
    # A parser is cheap and not thread-safe, so each call gets its own.
    return Parser(_language())


# --- source access -------------------------------------------------------------------------


@dataclass
class _Source:
    data: bytes
    cfg: ChunkConfig
    imports: list[str]
    newlines: list[int] = field(init=False)  # byte offset of every "\n"

    def __post_init__(self) -> None:
        self.newlines = [m.start() for m in _NEWLINE.finditer(self.data)]

    def text(self, start: int, end: int) -> str:
        return self.data[start:end].decode("utf-8")

    def line(self, pos: int) -> int:
        """1-based line of the byte at `pos` (lines end at "\\n", as tree-sitter counts)."""
        return bisect_left(self.newlines, pos) + 1

    def trim(self, start: int, end: int) -> tuple[int, int] | None:
        """The span without surrounding blank lines, keeping the first line's indentation."""
        chunk = self.data[start:end]
        stripped = chunk.strip()
        if not stripped:
            return None
        first = start + len(chunk) - len(chunk.lstrip())
        return self.line_start(first), first + len(stripped)

    def line_start(self, pos: int) -> int:
        """`pos` moved back over the indentation before it, if only indentation precedes it
        on its line, so pieces start with whole lines."""
        begin = self.data.rfind(b"\n", 0, pos) + 1
        return begin if not self.data[begin:pos].strip() else pos

    def piece(self, start: int, end: int, fields: dict[str, Any]) -> Piece:
        return self.make(self.text(start, end), self.line(start), self.line(end - 1), fields)

    def windows(self, start: int, end: int, fields: dict[str, Any]) -> list[Piece]:
        """line_windows over the span, numbered by their character offsets: line_windows cuts
        at str.splitlines(), which also breaks at \\r, \\f, U+2028 and others."""
        text = self.text(start, end)
        lines = LineIndex(text, first_line=self.line(start))
        return [
            self.make(w.text, lines.line(w.start), lines.line(w.end - 1), fields)
            for w in line_windows(text, self.cfg)
        ]

    def make(self, content: str, start_line: int, end_line: int, fields: dict[str, Any]) -> Piece:
        return Piece(
            content=content,
            context=fields.get("context", ""),
            start_line=start_line,
            end_line=end_line,
            symbol=fields.get("symbol"),
            kind=fields.get("kind", OTHER_KIND),
            attributes=list(fields.get("attributes", ())),
            imports=list(self.imports),
            metadata=dict(fields.get("metadata", {})),
        )


# --- grouping nodes into units -------------------------------------------------------------


@dataclass
class _Unit:
    """A node with the comments attached to it: a declaration or member with the comments
    directly above, or a lone comment or statement."""

    start: int  # byte offset, including attached comments
    end: int
    node: Node
    main: bool  # a declaration (top level) or a member (type body)
    last_row: int  # row of the last byte, to attach comments trailing on the same line

    @property
    def is_comment(self) -> bool:
        return self.node.type in _COMMENTS


def _is_declaration(node: Node) -> bool:
    return node.type in DECLARATION_KINDS


def _is_member(node: Node) -> bool:
    return node.type not in _COMMENTS


def _is_doc(node: Node, data: bytes) -> bool:
    head = data[node.start_byte : node.start_byte + 3]
    return head in (b"///", b"/**") and data[node.start_byte : node.end_byte] != b"/**/"


def _units(
    children: list[Node], data: bytes, is_main: Callable[[Node], bool], opening_row: int = -1
) -> list[_Unit]:
    """Group sibling nodes: comments directly above a main node join it, a comment on the
    same line after a unit joins that unit, everything else stands alone. A comment on the
    `opening_row` (the line of a body's `{`) before any unit belongs to what opened it, so
    it is left out."""
    units: list[_Unit] = []
    pending: list[Node] = []  # comments on their own lines, not yet placed
    for node in children:
        if node.type in _COMMENTS:
            last_row = units[-1].last_row if units else opening_row
            if not pending and node.start_point.row == last_row:
                if units:
                    units[-1].end, units[-1].last_row = node.end_byte, node.end_point.row
            else:
                pending.append(node)
            continue
        main = is_main(node)
        attached = _attached(pending, node, data) if main else 0
        loose, above = pending[: len(pending) - attached], pending[len(pending) - attached :]
        units += [_lone(c) for c in loose]
        start = above[0].start_byte if above else node.start_byte
        units.append(_Unit(start, node.end_byte, node, main, node.end_point.row))
        pending = []
    return units + [_lone(c) for c in pending]


def _lone(node: Node) -> _Unit:
    return _Unit(node.start_byte, node.end_byte, node, False, node.end_point.row)


def _attached(comments: list[Node], node: Node, data: bytes) -> int:
    """How many of the trailing `comments` sit directly above `node`: no blank line between
    them, except that a doc comment right above the declaration may be one blank line away."""
    count, below = 0, node.start_byte
    for comment in reversed(comments):
        between = data[comment.end_byte : below]
        allowed = 2 if count == 0 and _is_doc(comment, data) else 1
        if between.strip(b" \t\r\n;") or between.count(b"\n") > allowed:
            break
        count, below = count + 1, comment.start_byte
    return count


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


def _fields(node: Node, data: bytes) -> dict[str, Any]:
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


def _imports(root: Node) -> list[str]:
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


# --- planning: which spans become pieces ------------------------------------------------------


@dataclass
class _Plan:
    """Consecutive spans of the file that become pieces together: one declaration, a type cut
    at its members, or the code between two declarations."""

    spans: list[tuple[int, int]]  # byte spans, trimmed, in order
    fields: dict[str, Any]  # of every piece
    header: str = ""  # a declaration's signature, the context of its parts
    node: Node | None = None  # the declaration, for a plan of its single whole span
    whole_first: bool = False  # member spans of a type: one piece if the sum fits after all
    counts: list[int] = field(default_factory=list)


@dataclass
class _Group:
    first: int  # index of the plan's first and last span in this group
    last: int
    count: int  # summed span counts until verified
    verify: bool  # count the group as a whole: its spans' counts may not add up


def _file_pieces(src: _Source, units: list[_Unit]) -> list[Piece]:
    """Declarations in order, with the code between them as `other` pieces."""
    plans: list[_Plan] = []
    cursor, prev = 0, -1  # first byte and first unit not yet planned
    for i, unit in enumerate(units):
        if not unit.main:
            continue
        start = src.line_start(unit.start)
        plans += _other_plans(src, units[prev + 1 : i], cursor, start, preamble=prev < 0)
        plans.append(_declaration_plan(src, unit.node, start, unit.end))
        cursor, prev = unit.end, i
    plans += _other_plans(src, units[prev + 1 :], cursor, len(src.data), preamble=prev < 0)
    return _run(src, plans)


def _declaration_plan(src: _Source, node: Node, start: int, end: int) -> _Plan:
    fields = _fields(node, src.data)
    header = fields.pop("header")
    body = node.child_by_field_name("body")
    # Counting a type that is surely over the limit would be wasted: plan it at its members
    # straight away (a few bytes per token is typical; _run keeps it whole if it fits).
    if (
        body is not None
        and body.type in MEMBER_BODIES
        and end - start > _BYTES_PER_TOKEN * src.cfg.max_tokens
    ):
        return _member_plan(src, body, start, end, fields, header)
    return _Plan([(start, end)], fields, header, node=node)


def _member_plan(
    src: _Source, body: Node, start: int, end: int, fields: dict[str, Any], header: str
) -> _Plan:
    """The type cut before each member (with the member's own leading comments): the first
    span opens with the type's header, the last closes with its brace."""
    inner = [c for c in body.children if c.type not in ("{", "}")]
    units = _units(inner, src.data, _is_member, opening_row=body.start_point.row)
    cuts = [start]
    for k, unit in enumerate(units):
        cut = src.line_start(unit.start)
        if cut > cuts[-1] and not (k and _joins_previous(units[k - 1], unit)):
            cuts.append(cut)
    return _Plan(_spans(src, cuts, end), fields, header, whole_first=True)


def _other_plans(
    src: _Source, units: list[_Unit], start: int, end: int, *, preamble: bool
) -> list[_Plan]:
    """Code between declarations, cut before each statement (a comment directly above a
    statement stays with it), to be packed up to the target."""
    if _BLANK.fullmatch(src.data, start, end):
        return []
    cuts = [start]
    for prev, unit in zip(units, units[1:], strict=False):
        comment_above = prev.is_comment and prev.last_row + 1 >= unit.node.start_point.row
        if not comment_above and not _joins_previous(prev, unit):
            cuts.append(max(cuts[-1], src.line_start(unit.start)))
    fields: dict[str, Any] = {"kind": OTHER_KIND}
    if preamble:
        fields["metadata"] = {"section": "preamble"}
    spans = _spans(src, cuts, end)
    return [_Plan(spans, fields)] if spans else []


def _joins_previous(prev: _Unit, unit: _Unit) -> bool:
    """Keep `#if`/`#else` with the code they guard, and `#endif` with the code it closes."""
    return _directive(unit.node) == "#endif" or _directive(prev.node) in _OPENING_DIRECTIVES


def _directive(node: Node) -> str | None:
    if node.type != "directive" or node.child_count == 0:
        return None
    return node.children[0].type


def _spans(src: _Source, cuts: list[int], end: int) -> list[tuple[int, int]]:
    """Trimmed, non-blank spans between consecutive cut points."""
    bounds = zip(cuts, cuts[1:] + [end], strict=True)
    return [t for a, b in bounds if a < b and (t := src.trim(a, b)) is not None]


# --- running plans: counting in batches, then pieces ------------------------------------------


def _run(src: _Source, plans: list[_Plan]) -> list[Piece]:
    """Pieces of the plans. Tokens are counted in (at most) two batches: every span once,
    then each group of packed spans whose counts may not add up (see `_needs_verify`)."""
    todo = [p for p in plans if not p.counts]
    counts = iter(src.cfg.counter.count_many([src.text(*s) for p in todo for s in p.spans]))
    for plan in todo:
        plan.counts = [next(counts) for _ in plan.spans]
    groups = [_groups(src.cfg, plan) for plan in plans]
    verify = [(plan, g) for plan, gs in zip(plans, groups, strict=True) for g in gs if g.verify]
    texts = [src.text(plan.spans[g.first][0], plan.spans[g.last][1]) for plan, g in verify]
    for (_, g), n in zip(verify, src.cfg.counter.count_many(texts), strict=True):
        g.count = n
    return [
        piece
        for plan, gs in zip(plans, groups, strict=True)
        for piece in _plan_pieces(src, plan, gs)
    ]


def _groups(cfg: ChunkConfig, plan: _Plan) -> list[_Group]:
    """The whole plan if it may fit, else consecutive spans packed up to the target."""
    last = len(plan.spans) - 1
    total = sum(plan.counts)
    if plan.whole_first and total <= cfg.max_tokens:
        return [_Group(0, last, total, verify=_needs_verify(cfg, plan, 0, last))]
    return [
        _Group(a, b, sum(plan.counts[a : b + 1]), verify=_needs_verify(cfg, plan, a, b))
        for a, b in pack_counts(plan.counts, cfg.target_tokens)
    ]


def _needs_verify(cfg: ChunkConfig, plan: _Plan, first: int, last: int) -> bool:
    """Whether the summed count of spans first..last must be checked by counting them
    together: not when the tokenizer splits at whitespace and whitespace separates them."""
    if first == last:
        return False
    if not _additive_at_whitespace(cfg.counter):
        return True
    spans = plan.spans
    return any(spans[k][1] >= spans[k + 1][0] for k in range(first, last))


# Texts joined by whitespace in the probe: the sorts of lines spans start and end with.
_PROBE_TEXTS = (
    "struct Store: ObservableObject {",
    "    @Published var items: [Item] = []",
    "}",
    "/// Café naïve 日本語 emoji 😀 — “quoted”",
    "\t@available(iOS 17.0, *)",
    "func f<T>(_ x: T) -> Int { 0 }",
)
_PROBE_SEPARATORS = ("\n", "\n\n    ", "\r\n", " ", "\t")


@lru_cache(maxsize=8)
def _additive_at_whitespace(counter: object) -> bool:
    """Whether the tokenizer's count of `a + whitespace + b` is count(a) + count(b), as for
    tokenizers that split words at whitespace before anything else (BERT's WordPiece).
    Then spans cut at whitespace are counted once each and groups of them never again."""
    count = counter.count  # type: ignore[attr-defined]
    for a in _PROBE_TEXTS:
        for b in _PROBE_TEXTS:
            for sep in _PROBE_SEPARATORS:
                if count(a + sep + b) != count(a) + count(b):
                    return False
    return True


def _plan_pieces(src: _Source, plan: _Plan, groups: list[_Group]) -> list[Piece]:
    if plan.whole_first and len(groups) == 1 and groups[0].count > src.cfg.max_tokens:
        # The type's members added up to the limit but the whole came out over it.
        return _run(src, [_Plan(plan.spans, plan.fields, plan.header, counts=plan.counts)])
    pieces = [piece for g in groups for piece in _group_pieces(src, plan, g)]
    if plan.header and len(pieces) > 1:
        for i, piece in enumerate(pieces, 1):
            piece.context = plan.header
            piece.metadata.update(part=i, parts=len(pieces))
    return pieces


def _group_pieces(src: _Source, plan: _Plan, group: _Group) -> list[Piece]:
    """One piece for the group when it fits; else halves, member parts or line windows."""
    start, end = plan.spans[group.first][0], plan.spans[group.last][1]
    if group.count <= src.cfg.max_tokens:
        return [src.piece(start, end, plan.fields)]
    if group.first < group.last:
        mid = (group.first + group.last + 1) // 2
        halves = [(group.first, mid - 1), (mid, group.last)]
        counts = [_span_count(src, plan, a, b) for a, b in halves]
        return [
            piece
            for (a, b), n in zip(halves, counts, strict=True)
            for piece in _group_pieces(src, plan, _Group(a, b, n, verify=False))
        ]
    body = plan.node.child_by_field_name("body") if plan.node is not None else None
    if body is not None and body.type in MEMBER_BODIES:
        return _run(src, [_member_plan(src, body, start, end, plan.fields, plan.header)])
    return src.windows(start, end, plan.fields)


def _span_count(src: _Source, plan: _Plan, first: int, last: int) -> int:
    if first == last:
        return plan.counts[first]
    return src.cfg.count(src.text(plan.spans[first][0], plan.spans[last][1]))
