"""A source file as the UTF-8 bytes tree-sitter reports offsets in: line numbers of byte
offsets, spans trimmed to whole lines, and the pieces made of spans, each decoded on its own
(with the file's imports, and the fields its plan gives it)."""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from chunkers.code.syntax import OTHER_KIND, Syntax
from chunkers.config import ChunkConfig
from chunkers.model import Piece
from chunkers.spans import LineIndex
from chunkers.windows import line_windows

_NEWLINE_BYTE = ord("\n")


@dataclass
class SourceBytes:
    data: bytes
    cfg: ChunkConfig
    imports: list[str]
    syntax: Syntax
    newlines: list[int] = field(init=False)  # byte offset of every "\n"
    ascii: bool = field(init=False)  # the whole file: then no span needs checking

    def __post_init__(self) -> None:
        # numpy finds them a few times faster than a pattern's match objects would.
        bytes_ = np.frombuffer(self.data, dtype=np.uint8)
        self.newlines = np.flatnonzero(bytes_ == _NEWLINE_BYTE).tolist()
        self.ascii = self.data.isascii()

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
        # Every piece owns its lists and metadata: parts of one plan are marked one by one.
        get = fields.get
        metadata = get("metadata")
        return Piece(
            content,
            get("context", ""),
            start_line,
            end_line,
            get("symbol"),
            get("kind", OTHER_KIND),
            list(get("attributes", ())),
            self.imports.copy(),
            metadata.copy() if metadata else {},
        )
