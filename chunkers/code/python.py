"""Python source -> pieces: the module docstring, each top-level function and class, and the
module code between them. Big classes are split into methods and member groups; anything over
the hard limit, and source that does not parse, falls back to token-bounded line windows."""

from __future__ import annotations

import ast
import inspect
import re
import warnings
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Any

from chunkers.code.python_references import python_references
from chunkers.code.references import attach
from chunkers.config import ChunkConfig
from chunkers.model import Piece
from chunkers.packing import pack_counts
from chunkers.windows import line_windows

# Python's tokenizer ends lines only at these; str.splitlines() would also split at form feeds
# and other separators and so disagree with the line numbers in the AST.
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)


def chunk_python(
    text: str, cfg: ChunkConfig, *, origin: str = "<python>"
) -> tuple[list[Piece], list[str]]:
    """Cut Python source into pieces of at most `cfg.max_tokens` tokens.

    Returns (pieces, warnings); a file that does not parse is chunked by lines with a warning
    instead of raising."""
    if not text.strip():
        return [], []
    src = _Source(text, cfg)
    try:
        tree = parse_python(_without_bom(text))
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        # MemoryError is how CPython's parser reports "source too complex" (deep nesting).
        return _line_pieces(src), [_syntax_warning(origin, text, exc)]
    src.imports = _imports(tree)
    src.parsed_text = _without_bom(text)
    pieces = _module_pieces(src, tree)
    # From the same tree: what each piece declares and uses.
    if cfg.references:
        attach(pieces, python_references(tree))
    return pieces, []


def parse_python(text: str) -> ast.Module:
    """The syntax tree of Python source; raises SyntaxError or ValueError as `ast.parse` does.
    The compiler's warnings about the code itself (`"\\s"`: invalid escape sequence) are the
    user's business, not noise in an ingest's output, and under `-W error` they would turn
    into a SyntaxError."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", (SyntaxWarning, DeprecationWarning))
        return ast.parse(text)


# --- source access -----------------------------------------------------------------------


@dataclass
class _Span:
    node: ast.stmt
    start: int  # 1-based, inclusive, with decorators and attached comments
    end: int


@dataclass
class _Source:
    text: str
    cfg: ChunkConfig
    imports: list[str] = field(default_factory=list)
    parsed_text: str = ""
    lines: list[str] = field(init=False)
    offsets: list[int] = field(init=False)  # character offset where each line starts

    def __post_init__(self) -> None:
        self.lines = _split_lines(self.text)
        self.offsets = []
        pos = 0
        for line in self.lines:
            self.offsets.append(pos)
            pos += len(line)

    def segment(self, start: int, end: int) -> str:
        return "".join(self.lines[start - 1 : end])

    def is_blank(self, n: int) -> bool:
        return not self.lines[n - 1].strip()

    def is_comment(self, n: int) -> bool:
        return self.lines[n - 1].lstrip().lstrip("\ufeff").startswith("#")

    def indent(self, n: int) -> int:
        line = self.lines[n - 1]
        return len(line) - len(line.lstrip(" \t"))

    def line_at(self, offset: int) -> int:
        return bisect_right(self.offsets, offset)

    def piece(self, start: int, end: int, **fields: Any) -> list[Piece]:
        """One piece for lines start..end, or line windows when that is over the hard limit."""
        text = self.segment(start, end)
        if self.cfg.count(text) <= self.cfg.max_tokens:
            return [self.make(text, start, end, fields)]
        return [self.make(t, a, b, fields) for t, a, b in self.windows(start, end)]

    def windows(self, start: int, end: int) -> list[tuple[str, int, int]]:
        """line_windows over lines start..end, numbered by their character offsets:
        str.splitlines(), which line_windows cuts at, also breaks at form feeds and others."""
        base = self.offsets[start - 1]
        return [
            (w.text, self.line_at(base + w.start), self.line_at(base + w.end - 1))
            for w in line_windows(self.segment(start, end), self.cfg)
        ]

    def make(self, text: str, start: int, end: int, fields: dict[str, Any]) -> Piece:
        fields = {**fields, "metadata": dict(fields.get("metadata", {}))}
        fields["attributes"] = list(fields.get("attributes", []))
        return Piece(
            content=text, start_line=start, end_line=end, imports=list(self.imports), **fields
        )


def _split_lines(text: str) -> list[str]:
    lines, pos = [], 0
    for m in _LINE_BREAK.finditer(text):
        lines.append(text[pos : m.end()])
        pos = m.end()
    if pos < len(text):
        lines.append(text[pos:])
    return lines


def _without_bom(text: str) -> str:
    # ast rejects U+FEFF as a character; dropping it keeps every line number the same.
    return text[1:] if text.startswith("\ufeff") else text


# --- fallback ----------------------------------------------------------------------------


def _line_pieces(src: _Source) -> list[Piece]:
    return src.piece(1, len(src.lines), kind="window") if src.lines else []


def _syntax_warning(origin: str, text: str, exc: BaseException) -> str:
    line = getattr(exc, "lineno", None)
    if isinstance(exc, SyntaxError):
        reason = exc.msg
    elif isinstance(exc, RecursionError | MemoryError):
        reason = "source too deeply nested"
    else:
        reason = str(exc)
    if not line and "\0" in text:
        line = text.count("\n", 0, text.index("\0")) + 1
    return f"{origin}:{line or 1}: syntax error ({reason}), chunked by lines"


# --- AST helpers -------------------------------------------------------------------------


_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")


def _imports(tree: ast.Module) -> list[str]:
    """Every import, nested ones included. Imports are statements, so only statement
    bodies are searched: walking every expression node cost more than the parse."""
    found: list[tuple[int, int, str]] = []
    stack: list[ast.AST] = [tree]
    while stack:
        parent = stack.pop()
        for body in _BODIES:
            for node in getattr(parent, body, None) or ():
                if isinstance(node, ast.Import):
                    found += [(node.lineno, node.col_offset, a.name) for a in node.names]
                elif isinstance(node, ast.ImportFrom):
                    name = "." * (node.level or 0) + (node.module or "")
                    found.append((node.lineno, node.col_offset, name))
                else:
                    stack.append(node)
    return list(dict.fromkeys(name for _, _, name in sorted(found)))


def _own_start(node: ast.stmt) -> int:
    decorators = getattr(node, "decorator_list", [])
    return min([node.lineno] + [d.lineno for d in decorators])


def _spans(src: _Source, body: list[ast.stmt], floor: int, ceiling: int) -> list[_Span]:
    """Line spans of the statements of one body. Statements take the comment lines directly
    above them; definitions also the deeper-indented comment lines trailing their body."""
    spans: list[_Span] = []
    for i, node in enumerate(body):
        end = node.end_lineno or node.lineno
        if isinstance(node, _DEFS):
            next_start = _own_start(body[i + 1]) if i + 1 < len(body) else ceiling
            end = _trailing_comments(src, end, next_start, src.indent(node.lineno))
        start = _leading_comments(src, _own_start(node), spans[-1].end if spans else floor)
        spans.append(_Span(node, start, end))
    return spans


def _leading_comments(src: _Source, start: int, floor: int) -> int:
    while start - 1 > floor and src.is_comment(start - 1):
        start -= 1
    return start


def _trailing_comments(src: _Source, end: int, ceiling: int, indent: int) -> int:
    last, n = end, end + 1
    while n < ceiling and (src.is_blank(n) or (src.is_comment(n) and src.indent(n) > indent)):
        if not src.is_blank(n):
            last = n
        n += 1
    return last


def _is_docstring(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def _doc_line(node: ast.AST) -> str | None:
    """First line of a definition's docstring, or of a docstring expression statement."""
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
        doc = node.value.value if isinstance(node.value.value, str) else None
    else:
        doc = ast.get_docstring(node)  # type: ignore[arg-type]
    doc = inspect.cleandoc(doc).strip() if doc else ""
    return doc.splitlines()[0] if doc else None


def _decorators(src: _Source, node: ast.stmt) -> list[str]:
    out = []
    for dec in getattr(node, "decorator_list", []):
        text = ast.get_source_segment(src.parsed_text, dec) or ast.unparse(dec)
        if "\n" in text:
            text = " ".join(part.strip() for part in text.splitlines())
        out.append("@" + text)
    return out


def _def_fields(src: _Source, node: ast.stmt, symbol: str, kind: str) -> dict[str, Any]:
    metadata: dict[str, Any] = {}
    if doc := _doc_line(node):
        metadata["docstring"] = doc
    if isinstance(node, ast.AsyncFunctionDef):
        metadata["async"] = True
    return {
        "symbol": symbol,
        "kind": kind,
        "attributes": _decorators(src, node),
        "metadata": metadata,
    }


def _number_parts(pieces: list[Piece]) -> list[Piece]:
    if len(pieces) > 1:
        for i, piece in enumerate(pieces, 1):
            piece.metadata.update(part=i, parts=len(pieces))
    return pieces


# --- module level ------------------------------------------------------------------------


def _module_pieces(src: _Source, tree: ast.Module) -> list[Piece]:
    spans = _spans(src, tree.body, floor=0, ceiling=len(src.lines) + 1)
    pieces: list[Piece] = []
    cursor = 1  # first line not yet assigned to a piece
    for i, span in enumerate(spans):
        owned = _owned_pieces(src, spans, i)
        if owned is None:
            continue
        pieces += _code_pieces(src, cursor, span.start - 1, spans)
        pieces += owned
        cursor = span.end + 1
    pieces += _code_pieces(src, cursor, len(src.lines), spans)
    return pieces


def _owned_pieces(src: _Source, spans: list[_Span], i: int) -> list[Piece] | None:
    """Pieces of a definition or the module docstring; None for plain module code."""
    span = spans[i]
    node = span.node
    if isinstance(node, ast.ClassDef):
        return _class_pieces(src, span)
    if isinstance(node, _FUNCS):
        fields = _def_fields(src, node, node.name, "function")
        return _number_parts(src.piece(span.start, span.end, **fields))
    # A docstring sharing its line with a following statement ("""d"""; import x) stays code.
    alone = i + 1 == len(spans) or spans[i + 1].start > span.end
    if i == 0 and _is_docstring(node) and alone:
        metadata = {"docstring": doc} if (doc := _doc_line(node)) else {}
        return src.piece(span.start, span.end, kind="module_docstring", metadata=metadata)
    return None


def _code_pieces(src: _Source, first: int, last: int, spans: list[_Span]) -> list[Piece]:
    """Module code between definitions, cut at statement starts and packed to the target."""
    while first <= last and src.is_blank(first):
        first += 1
    while last >= first and src.is_blank(last):
        last -= 1
    if first > last:
        return []
    cuts = sorted({s.start for s in spans if first < s.start <= last})
    bounds = zip([first] + cuts, cuts + [last + 1], strict=True)
    blocks = [blk for a, b in bounds if (blk := _trim(src, a, b - 1))]
    counts = src.cfg.counter.count_many([src.segment(a, b) for a, b in blocks])
    return [
        piece
        for i, j in pack_counts(counts, src.cfg.target_tokens)
        for piece in src.piece(blocks[i][0], blocks[j][1], kind="module_code")
    ]


def _trim(src: _Source, start: int, end: int) -> tuple[int, int] | None:
    while end >= start and src.is_blank(end):
        end -= 1
    return (start, end) if end >= start else None


# --- classes -----------------------------------------------------------------------------


def _class_pieces(src: _Source, span: _Span) -> list[Piece]:
    node = span.node
    assert isinstance(node, ast.ClassDef)
    fields = _def_fields(src, node, node.name, "class")
    if src.cfg.count(src.segment(span.start, span.end)) <= src.cfg.target_tokens:
        return src.piece(span.start, span.end, **fields)
    header = _class_header(src, node)
    pieces = [
        piece
        for a, b, part_fields in _class_parts(src, span, fields)
        for piece in src.piece(a, b, context=header, **part_fields)
    ]
    return _number_parts(pieces)


def _class_parts(
    src: _Source, span: _Span, fields: dict[str, Any]
) -> list[tuple[int, int, dict[str, Any]]]:
    """Partition the class lines: the header with the members before the first method, then
    each method (or nested class), and each run of other members between methods."""
    node = span.node
    assert isinstance(node, ast.ClassDef)
    members = _spans(src, node.body, floor=node.lineno, ceiling=span.end + 1)
    starts: list[tuple[int, dict[str, Any]]] = [(span.start, fields)]
    after_def = False
    for m in members:
        is_def = isinstance(m.node, _DEFS)
        if (is_def or after_def) and m.start > starts[-1][0]:
            starts.append((m.start, _member_fields(src, node.name, m.node, is_def)))
        after_def = is_def
    # The names each part holds, listed as the tree-sitter languages list them.
    first_lines = [a for a, _ in starts]
    held: list[list[str]] = [[] for _ in starts]
    for m in members:
        held[bisect_right(first_lines, m.start) - 1] += _member_names(m.node)
    parts = []
    for k, (a, part_fields) in enumerate(starts):
        b = starts[k + 1][0] - 1 if k + 1 < len(starts) else span.end
        if trimmed := _trim(src, a, b):
            if held[k]:
                metadata = {**part_fields.get("metadata", {}), "members": held[k]}
                part_fields = {**part_fields, "metadata": metadata}
            parts.append((*trimmed, part_fields))
    return parts


def _member_names(node: ast.stmt) -> list[str]:
    """What a class member declares: a method's or nested class's name, an attribute's."""
    if isinstance(node, _DEFS):
        return [node.name]
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return [node.target.id]
    return []


def _member_fields(src: _Source, cls: str, node: ast.stmt, is_def: bool) -> dict[str, Any]:
    if not is_def:
        return {"symbol": cls, "kind": "class"}
    kind = "class" if isinstance(node, ast.ClassDef) else "method"
    return _def_fields(src, node, f"{cls}.{node.name}", kind)  # type: ignore[attr-defined]


def _class_header(src: _Source, node: ast.ClassDef) -> str:
    """Decorators, the `class Name(Bases):` line(s) and the docstring's first line."""
    body_start = _own_start(node.body[0])
    sig_end = node.lineno
    if body_start > node.lineno:
        sig_end = body_start - 1
        while sig_end > node.lineno and (src.is_blank(sig_end) or src.is_comment(sig_end)):
            sig_end -= 1
    lines = [line.rstrip("\r\n") for line in src.lines[_own_start(node) - 1 : sig_end]]
    if doc := _doc_line(node):
        body_line = src.lines[body_start - 1]
        indent = body_line[: src.indent(body_start)] if body_start > node.lineno else "    "
        lines.append(f'{indent}"""{doc}"""')
    return "\n".join(lines)
