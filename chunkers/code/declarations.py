"""Source -> pieces, one per top-level declaration, with the code between them kept: the
one implementation behind every tree-sitter language (Swift's own syntax rules in
`chunkers.code.swift_syntax`, the others' in `chunkers.code.grammar_table`).

Rules (a language's `Syntax`, `chunkers.code.syntax`, says which nodes are declarations,
containers and comments):

* Every top-level declaration becomes a piece that starts at its leading comments (the
  comment lines directly above it; a doc comment may also sit one blank line above) and ends
  at its last byte, plus a comment trailing on that same line.
* Everything else at the top level (imports, preprocessor lines, statements, stray comments,
  unparseable regions) becomes `other` pieces, packed up to the target, so every non-blank
  line of the file lands in some piece.
* A declaration is kept whole while it fits the hard limit (`cfg.max_tokens`): a type that
  fits stays one piece even above the target, because a whole type retrieves better than
  parts of it. A container over the hard limit is split at its members: consecutive members
  packed up to `cfg.target_tokens`, each part carrying the container's header as `context`.
  Anything still over the hard limit (a huge member, function or statement) falls back to
  token-bounded line windows, so no piece's content ever exceeds `cfg.max_tokens`.
* Work is done on the UTF-8 bytes tree-sitter reports offsets in
  (`chunkers.code.source_bytes`); text is decoded per piece. Every span (a declaration, a
  member of a type planned in parts, a statement) is counted once, in one batch per file.
  Spans packed together are not counted again when the tokenizer is known to split at
  whitespace (counts then add up across the whitespace between spans; see
  `_additive_at_whitespace`); otherwise each packed group is counted. A type too big to be
  worth counting whole (see `_BYTES_PER_TOKEN`) is counted at its members straight away,
  and code between declarations that surely fits the target is not cut up at all.
* A container's deprecated members are listed on its piece, and a part holding only
  deprecated members is tagged deprecated (`chunkers.code.deprecated_members`).
* Lone surrogates (which neither UTF-8 nor the tokenizer accept) become U+FFFD.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache, partial
from typing import Any

from tree_sitter import Node

from chunkers.code.deprecated_members import DEPRECATED_MEMBERS, deprecated_members, mark_pieces
from chunkers.code.references import attach
from chunkers.code.source_bytes import SourceBytes
from chunkers.code.syntax import OTHER_KIND, Syntax
from chunkers.code.units import Unit
from chunkers.config import ChunkConfig
from chunkers.model import Piece
from chunkers.packing import pack_counts

# Code runs 3.5-4 UTF-8 bytes per token of the default model; a type with more bytes than
# this many per allowed token is planned at its members without counting it whole.
_BYTES_PER_TOKEN = 4
# Gaps made only of whitespace and byte-order marks hold no code worth a piece. Never `;`:
# a region of empty statements is still lines of the file (a lone `;` after a unit joins
# that unit: chunkers.code.units).
_BOM = "\ufeff".encode()
_SURROGATE = re.compile("[\ud800-\udfff]")


def chunk_source(text: str, cfg: ChunkConfig, syntax: Syntax) -> list[Piece]:
    """Cut source into pieces of at most `cfg.max_tokens` tokens (see module doc)."""
    if not text.strip():
        return []
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        # Lone surrogates: neither UTF-8 nor the tokenizer takes them. One replacement
        # character each keeps every other character and every line where it was.
        text = _SURROGATE.sub("\ufffd", text)
        data = text.encode("utf-8")
    root = syntax.parse(data)
    if root.type == "ERROR":  # no whole file recognisable: plain line windows
        pieces = SourceBytes(data, cfg, [], syntax).windows(0, len(data), {"kind": OTHER_KIND})
    else:
        src = SourceBytes(data, cfg, syntax.imports(root, data), syntax)
        pieces = _file_pieces(src, syntax.top_units(root, data))
    # From the same tree: what each piece declares and uses (chunkers.code.references). An
    # ERROR root still holds the declarations and uses its error recovery read (an
    # Objective-C file whose macros the grammar does not know: a third of React Native's).
    if cfg.references:
        attach(pieces, syntax.references(root))
    return pieces


# --- planning: which spans become pieces ------------------------------------------------------


@dataclass(slots=True)
class _Plan:
    """Consecutive spans of the file that become pieces together: one declaration, a type cut
    at its members, or the code between two declarations."""

    spans: list[tuple[int, int]]  # byte spans, trimmed, in order
    fields: dict[str, Any]  # of every piece
    header: str = ""  # a declaration's signature, the context of its parts
    node: Node | None = None  # the declaration, for a plan of its single whole span
    whole_first: bool = False  # member spans of a type: one piece if the sum fits after all
    counts: Sequence[int] = ()
    # A type's named members with their first and last lines, to list in each part.
    members: Sequence[tuple[int, int, str]] = ()


@dataclass(slots=True)
class _Group:
    first: int  # index of the plan's first and last span in this group
    last: int
    count: int  # summed span counts until verified
    verify: bool  # count the group as a whole: its spans' counts may not add up


def _file_pieces(src: SourceBytes, units: list[Unit]) -> list[Piece]:
    """Declarations in order, with the code between them as `other` pieces."""
    plans: list[_Plan] = []
    cursor, prev = 0, -1  # first byte and first unit not yet planned
    for i, unit in enumerate(units):
        if not unit.main:
            continue
        start = src.line_start(unit.start)
        if not _blank(src.data, cursor, start):  # most gaps are blank lines
            plans += _other_plans(src, units[prev + 1 : i], cursor, start, preamble=prev < 0)
        plans.append(_declaration_plan(src, unit, start))
        cursor, prev = unit.end, i
    plans += _other_plans(src, units[prev + 1 :], cursor, len(src.data), preamble=prev < 0)
    return _run(src, plans)


def _declaration_plan(src: SourceBytes, unit: Unit, start: int) -> _Plan:
    node, end = unit.node, unit.end
    fields = src.syntax.fields(node, src.data)
    header = fields.pop("header")
    metadata = fields.setdefault("metadata", {})
    if (doc := src.syntax.docstring(unit, src.data)) is not None:
        metadata["docstring"] = doc
    if unit.container:
        metadata["container"] = unit.container
    if deprecated := deprecated_members(src.syntax, node, src.data):
        fields[DEPRECATED_MEMBERS] = deprecated
    # Counting a type that is surely over the limit would be wasted: plan it at its members
    # straight away (a few bytes per token is typical; _run keeps it whole if it fits).
    if end - start > _BYTES_PER_TOKEN * src.cfg.max_tokens:
        members = src.syntax.members(node, src.data)
        if members is not None:
            return _member_plan(src, members, start, end, fields, header)
    return _Plan([(start, end)], fields, header, node=node)


def _member_plan(
    src: SourceBytes, units: list[Unit], start: int, end: int, fields: dict[str, Any], header: str
) -> _Plan:
    """The type cut before each member (with the member's own leading comments): the first
    span opens with the type's header, the last closes with its brace."""
    cuts = [start]
    for k, unit in enumerate(units):
        cut = src.line_start(unit.start)
        if cut > cuts[-1] and not (k and src.syntax.joins_previous(units[k - 1], unit)):
            cuts.append(cut)
    members = [
        (src.line(unit.start), src.line(unit.end - 1), name)
        for unit in units
        if unit.main and (name := src.syntax.member_name(unit.node, src.data))
    ]
    return _Plan(_spans(src, cuts, end), fields, header, whole_first=True, members=members)


def _other_plans(
    src: SourceBytes, units: list[Unit], start: int, end: int, *, preamble: bool
) -> list[_Plan]:
    """Code between declarations, cut before each statement (a comment directly above a
    statement stays with it), to be packed up to the target."""
    if _blank(src.data, start, end):
        return []
    fields: dict[str, Any] = {"kind": OTHER_KIND}
    if preamble:
        fields["metadata"] = {"section": "preamble"}
    # Code that surely fits the target is one piece however it is cut (`_surely_within`):
    # most runs of includes and imports.
    whole = src.trim(start, end)
    if whole is not None and _surely_within(src, *whole, src.cfg.target_tokens):
        return [_Plan([whole], fields)]
    cuts = [start]
    for prev, unit in zip(units, units[1:], strict=False):
        comment_above = prev.comment and prev.last_row + 1 >= unit.node.start_point.row
        if not comment_above and not src.syntax.joins_previous(prev, unit):
            cuts.append(max(cuts[-1], src.line_start(unit.start)))
    spans = _spans(src, cuts, end)
    return [_Plan(spans, fields)] if spans else []


def _blank(data: bytes, start: int, end: int) -> bool:
    # bytes.strip() removes what a pattern's \s matches, and costs half as much.
    gap = data[start:end].strip()
    return not gap or not gap.replace(_BOM, b"").strip()


def _spans(src: SourceBytes, cuts: list[int], end: int) -> list[tuple[int, int]]:
    """Trimmed, non-blank spans between consecutive cut points."""
    bounds = zip(cuts, cuts[1:] + [end], strict=True)
    return [t for a, b in bounds if a < b and (t := src.trim(a, b)) is not None]


# --- running plans: counting in batches, then pieces ------------------------------------------


def _run(src: SourceBytes, plans: list[_Plan]) -> list[Piece]:
    """Pieces of the plans. Tokens are counted in (at most) two batches: every span once,
    then each group of packed spans whose counts may not add up (see `_needs_verify`)."""
    for plan in plans:
        if not plan.counts and (bounds := _surely_fits(src, plan)) is not None:
            plan.counts = bounds
    todo = [p for p in plans if not p.counts]
    counts = iter(src.cfg.counter.count_many([src.text(*s) for p in todo for s in p.spans]))
    for plan in todo:
        plan.counts = [next(counts) for _ in plan.spans]
    limit = src.cfg.max_tokens
    # Most plans are one span within the limit (a declaration, or one statement between
    # two): one piece each, with no groups to pack or verify.
    whole = [len(plan.spans) == 1 and plan.counts[0] <= limit for plan in plans]
    groups = [
        None if one else _groups(src.cfg, plan) for plan, one in zip(plans, whole, strict=True)
    ]
    verify = [
        (plan, g) for plan, gs in zip(plans, groups, strict=True) for g in gs or () if g.verify
    ]
    if verify:
        texts = [src.text(plan.spans[g.first][0], plan.spans[g.last][1]) for plan, g in verify]
        for (_, g), n in zip(verify, src.cfg.counter.count_many(texts), strict=True):
            g.count = n
    pieces: list[Piece] = []
    for plan, gs in zip(plans, groups, strict=True):
        if gs is None:
            piece = src.piece(*plan.spans[0], plan.fields)
            _mark_deprecated(plan, [piece])
            pieces.append(piece)
        else:
            pieces += _plan_pieces(src, plan, gs)
    return pieces


def _surely_fits(src: SourceBytes, plan: _Plan) -> list[int] | None:
    """Upper bounds of the spans' tokens that already show where they go, found without
    tokenizing: every token of ASCII text covers at least one byte. A whole declaration
    within the limit, or spans whose sum is within the target, come out as one piece
    whatever their exact counts, so the bounds serve as counts; this spares tokenizing most
    small declarations (prototypes, constants, short functions) and short runs of code
    between them (includes, imports)."""
    if not plan.spans:
        return None
    start, end = plan.spans[0][0], plan.spans[-1][1]
    limit = src.cfg.max_tokens if len(plan.spans) == 1 else src.cfg.target_tokens
    if not _surely_within(src, start, end, limit):
        return None
    return [b - a for a, b in plan.spans]


def _surely_within(src: SourceBytes, start: int, end: int, limit: int) -> bool:
    """Whether bytes start..end hold at most `limit` tokens, known without tokenizing."""
    return end - start <= limit and (src.ascii or src.data[start:end].isascii())


def _groups(cfg: ChunkConfig, plan: _Plan) -> list[_Group]:
    """The whole plan if it may fit, else consecutive spans packed up to the target."""
    last = len(plan.spans) - 1
    if last == 0:  # most plans: one declaration, or one statement between two
        return [_Group(0, 0, plan.counts[0], verify=False)]
    total = sum(plan.counts)
    # Within the target, packing would put every span in one group anyway.
    if (plan.whole_first and total <= cfg.max_tokens) or (
        plan.spans and total <= cfg.target_tokens
    ):
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


def _plan_pieces(src: SourceBytes, plan: _Plan, groups: list[_Group]) -> list[Piece]:
    if plan.whole_first and len(groups) == 1 and groups[0].count > src.cfg.max_tokens:
        # The type's members added up to the limit but the whole came out over it.
        again = _Plan(plan.spans, plan.fields, plan.header, counts=plan.counts)
        again.members = plan.members
        return _run(src, [again])
    pieces = [piece for g in groups for piece in _group_pieces(src, plan, g)]
    if plan.header and len(pieces) > 1:
        for i, piece in enumerate(pieces, 1):
            piece.context = plan.header
            piece.metadata.update(part=i, parts=len(pieces))
            if names := _members_in(plan, piece):
                piece.metadata["members"] = names
    # Parts made by a nested plan were marked there; this plan knows no members of them.
    if plan.members or len(pieces) == 1:
        _mark_deprecated(plan, pieces)
    return pieces


def _mark_deprecated(plan: _Plan, pieces: list[Piece]) -> None:
    if deprecated := plan.fields.get(DEPRECATED_MEMBERS):
        mark_pieces(pieces, deprecated, partial(_members_in, plan))


def _members_in(plan: _Plan, piece: Piece) -> list[str]:
    """The members whose lines the part shares: those it holds, or the one it is a window of."""
    first, last = piece.start_line or 0, piece.end_line or 0
    return [name for a, b, name in plan.members if a <= last and b >= first]


def _group_pieces(src: SourceBytes, plan: _Plan, group: _Group) -> list[Piece]:
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
    members = src.syntax.members(plan.node, src.data) if plan.node is not None else None
    if members is not None:
        return _run(src, [_member_plan(src, members, start, end, plan.fields, plan.header)])
    return src.windows(start, end, plan.fields)


def _span_count(src: SourceBytes, plan: _Plan, first: int, last: int) -> int:
    if first == last:
        return plan.counts[first]
    return src.cfg.count(src.text(plan.spans[first][0], plan.spans[last][1]))
