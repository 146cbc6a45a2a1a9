"""What a code file declares and uses, read from the tree the chunker already parsed: one
tree-sitter query per language (chunkers/code/queries/<name>.scm) whose captures say what a
node is, and the few names a query cannot spell (an Objective-C selector) built here.

Capture names of a query file:

* `@def.<kind>` on a declaration node, with `@name` on its name node in the same pattern
  (without `@name` the name is built by `_special_name`);
* a kind of use on the name node that is used: `@call`, `@send` (an Objective-C message, on
  the whole message expression), `@selector`, `@member`, `@type`, `@inherit`, `@import`,
  `@value` (a bare name read or assigned where an expression goes: each query lists those
  places, since a catch-all would also record every label and local binding), `@param` (a
  parameter's name where it is declared), `@category` (an Objective-C category's own name),
  `@unparsed` (a name left directly under a parse error), optionally with `@qualifier` on
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
_PRIORITY = (
    "send",
    "selector",
    "call",
    "inherit",
    "import",
    "member",
    "type",
    "value",
    "param",
    "category",
    "unparsed",
)
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


# Not frozen: a frozen dataclass's __init__ costs ~6x, and chunking builds one per use.
@dataclass(slots=True, unsafe_hash=True)
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
    """The definitions and uses `query` finds under `root`, in source order, scoped.

    Chunking a file runs this once, so it is written for speed: one cursor, each pattern's
    role worked out once, nodes keyed by start byte (no two recorded nodes share one), text
    decoded only for what is kept."""
    roles = _pattern_roles(query)
    defs: list[tuple[int, int, Node, str, Node | None]] = []  # start, -end, node, kind, name
    uses: dict[int, tuple[int, Node, str, Node | None]] = {}  # by start: rank, node, use, qual
    aliases: dict[str, str] = {}
    claimed: set[int] = set()  # start bytes of names declared, or of parts of a selector
    ascii, text = _texts(root)
    held_use = uses.get
    for index, captures in QueryCursor(query).matches(root):
        pattern = roles.get(index)
        if pattern is None:
            pattern = roles[index] = _pattern_of(captures)
        role, rank, extra = pattern
        node = captures[role][0]
        if rank < 0:  # a declaration; `extra`: whether its name is captured
            named = captures["name"][0] if extra else None
            if named is not None:
                claimed.add(named.start_byte)
            defs.append((node.start_byte, -node.end_byte, node, role[4:], named))
            continue
        if extra and "alias" in captures:  # an import that may rename
            alias = captures["alias"][0]
            aliases[text(alias)] = text(node)
            claimed.add(alias.start_byte)
        start = node.start_byte
        held = held_use(start)
        if held is None or rank < held[0]:
            qual = captures.get("qualifier")
            uses[start] = (rank, node, role, qual[0] if qual else None)
    named_defs = []
    for start, neg_end, node, kind, name_node in defs:
        name = text(name_node) if name_node is not None else _special_name(node, claimed, text)
        if name:
            named_defs.append((start, neg_end, node, kind, name))
    named_defs.sort(key=_by_span)
    return _scoped(named_defs, uses, claimed, aliases, ascii, text)


def _texts(root: Node) -> tuple[str | None, Callable[[Node], str]]:
    """The file's text when it is ASCII (most code: byte offsets are then character offsets,
    so a node's text is a slice of it), and a node's text as `node.text` decoded. Both beat
    `node.text.decode(...)`, which cost a third of the work per record. The bytes are the
    tree's own (a grammar's masks may have rewritten the file before parsing), padded so
    that offsets into them are the nodes' byte offsets."""
    source = b" " * root.start_byte + (root.text or b"")
    if source.isascii():
        decoded = source.decode("ascii")
        return decoded, lambda node: decoded[node.start_byte : node.end_byte]
    return None, lambda node: source[node.start_byte : node.end_byte].decode("utf-8", "replace")


_RANK = {use: rank for rank, use in enumerate(_PRIORITY)}
_SPECIAL_USES = frozenset({"send", "selector"})
_SPANNING_USES = frozenset({"send", "selector", "import"})


def _by_span(d: tuple[int, int, Node, str, str]) -> tuple[int, int]:
    return (d[0], d[1])


def _pattern_roles(query: Query) -> dict[int, tuple[str, int, bool]]:
    """Per pattern of `query`, what `_pattern_of` says of it, filled as patterns first
    match; kept with the compiled query."""
    return _ROLES.setdefault(id(query), {})


# By the query's id: query_for's cache keeps every query alive, so no id is reused.
_ROLES: dict[int, dict[int, tuple[str, int, bool]]] = {}


def _pattern_of(captures: dict[str, list[Node]]) -> tuple[str, int, bool]:
    """The capture that says what a pattern records (`def.<kind>` or a use kind), its rank
    (-1 for a declaration, else its use's place in _PRIORITY), and whether it captures a
    `@name` (a declaration) or may capture an `@alias` (an import)."""
    for key in captures:
        if key.startswith("def."):
            return key, -1, "name" in captures
        if key in USE_KINDS:
            return key, _RANK[key], key == "import"
    raise ValueError(f"a references pattern without a def.<kind> or use capture: {captures}")


def _special_name(node: Node, claimed: set[int], text: Callable[[Node], str]) -> str:
    """Names a query cannot capture as one node: Objective-C selectors and class names. The
    nodes the name is made of go to `claimed`: they are no uses of their own."""
    kind = node.type
    if kind in ("method_definition", "method_declaration"):
        return _method_selector(node, claimed, text)
    if kind == "message_expression":
        return _message_selector(node, claimed, text)
    if kind == "selector_expression":
        found = _SELECTOR.search(node.text or b"")
        return found.group(1).decode() if found else ""
    for child in node.children:  # @interface Name (Category) (the query's `@category`)
        if child.type == "identifier":
            claimed.add(child.start_byte)
            return text(child)
    return ""


def _method_selector(node: Node, claimed: set[int], text: Callable[[Node], str]) -> str:
    """`doThing:with:` from a method's keywords and parameters. Its keywords are the first
    identifier and each one followed by a parameter; others are attribute macros
    (`- (void)invalidate NS_REQUIRES_SUPER;`)."""
    parts: list[str] = []
    children = node.children
    last = len(children) - 1
    seen_keyword = False
    for i, child in enumerate(children):
        kind = child.type
        if kind == "method_parameter":  # its name is the query's `@param`
            parts.append(":")
        elif kind == "identifier":
            if not seen_keyword or (i < last and children[i + 1].type == "method_parameter"):
                parts.append(text(child))
                claimed.add(child.start_byte)
            seen_keyword = True
    return "".join(parts)


def _message_selector(node: Node, claimed: set[int], text: Callable[[Node], str]) -> str:
    """`doThing:with:` from a message's keywords (its `method` children) and colons."""
    keywords = {c.start_byte for c in node.children_by_field_name("method")}
    parts: list[str] = []
    for child in node.children:
        kind = child.type
        if kind == ":":
            if parts:
                parts.append(":")
        elif kind == "identifier" and child.start_byte in keywords:
            parts.append(text(child))
            claimed.add(child.start_byte)
    return "".join(parts)


def _scoped(
    defs: list[tuple[int, int, Node, str, str]],
    uses: dict[int, tuple[int, Node, str, Node | None]],
    claimed: set[int],
    aliases: dict[str, str],
    ascii: str | None,
    text: Callable[[Node], str],
) -> list[Reference]:
    """Records in source order, each with its enclosing declaration: one sweep over the
    declarations (sorted by start, outermost first) and the uses (by start) with a stack of
    the declarations open at the current byte. A use is named here, in the same sweep: a
    message's keywords it claims start after it, so they are skipped when reached. Text is
    sliced inline from `ascii` when the file is ASCII: a call per name cost as much as the
    slice, and a receiver (a nested message can run over many lines) is sliced to its first
    characters only."""
    # End byte, kind, name and qualified name (`Type.method`) of the declarations open here.
    stack: list[tuple[int, str, str, str]] = []
    out: list[Reference] = []
    append = out.append
    d, n_defs = 0, len(defs)
    next_def = defs[0][0] if defs else _NO_DEF
    for start in (*sorted(uses), _END):
        while next_def <= start:
            d_start, neg_end, d_node, kind, d_name = defs[d]
            d += 1
            next_def = defs[d][0] if d < n_defs else _NO_DEF
            while stack and stack[-1][0] <= d_start:
                stack.pop()
            container = next((n for _, k, n, _ in reversed(stack) if k in TYPE_KINDS), "")
            if kind in ("interface", "implementation") and d_node.child_by_field_name("category"):
                kind = "category"
            append(_record(d_node, d_name, DEFINITION, kind, container, ""))
            qualified = f"{container}.{d_name}" if container and kind not in TYPE_KINDS else d_name
            stack.append((-neg_end, kind, d_name, qualified))
        if start in claimed:
            continue
        if start == _END:
            break
        _, node, role, receiver = uses[start]
        if role in _SPECIAL_USES:
            name = _special_name(node, claimed, text)
        elif ascii is not None:
            name = ascii[start : node.end_byte]
        else:
            name = text(node)
        if not name or name in _RECEIVER_WORDS:
            continue
        while stack and stack[-1][0] <= start:
            stack.pop()
        if aliases and role != "import":
            name = aliases.get(name, name)
        line = node.start_point[0] + 1
        # A name is one line; only a message, a selector or an import can span several.
        end = node.end_point[0] + 1 if role in _SPANNING_USES else line
        if receiver is None:
            written = ""
        elif ascii is not None:
            at = receiver.start_byte
            written = ascii[at : min(receiver.end_byte, at + _QUALIFIER_CHARS)]
        else:
            written = text(receiver)[:_QUALIFIER_CHARS]
        append(Reference(name, role, line, end, "", stack[-1][3] if stack else "", written))
    return out


_END = 1 << 62  # past every byte
_NO_DEF = _END + 1  # past the end: no declaration left


def _record(node: Node, name: str, role: str, kind: str, scope: str, qual: str) -> Reference:
    return Reference(name, role, node.start_point[0] + 1, node.end_point[0] + 1, kind, scope, qual)


def attach(pieces: list[Piece], refs: list[Reference]) -> None:
    """Give each piece the records that start on its lines (pieces are in line order; where
    line windows overlap, the later piece takes the record; a record outside every piece is
    dropped)."""
    starts = [p.start_line or 0 for p in pieces]
    # Records come in line order, mostly many to a piece: the piece found for one line holds
    # for every line up to the next piece's start, so the search runs once per piece.
    low, high, end, target = 1, 0, 0, None  # lines [low, high) up to `end` go to target
    for ref in refs:
        line = ref.line
        if not low <= line < high:
            at = bisect_right(starts, line) - 1
            low = starts[at] if at >= 0 else -_END
            high = starts[at + 1] if at + 1 < len(starts) else _END
            piece = pieces[at] if at >= 0 else None
            end = (piece.end_line or 0) if piece is not None else -_END
            target = piece.references if piece is not None else None
        if target is not None and line <= end:
            target.append(ref)
