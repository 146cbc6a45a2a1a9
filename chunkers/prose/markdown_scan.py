"""Markdown → sections of blocks, one line scan.

Recognises what decides chunk boundaries and nothing more: ATX and setext headings, fenced
code, blank-line separated text blocks. HTML comments (`<!-- … -->`, authoring notes in
TSPL) and DocC directives are removed; DocC links are made readable. Every block remembers
the original line number of each of its lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property

from chunkers.prose.docc import (
    Directive,
    closes_fence,
    fence_marker,
    find_directive,
    readable_links,
)

_ATX = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r" {0,3}(={2,}|-{2,})[ \t]*$")
_THEMATIC = re.compile(r" {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_NOT_SETEXT_TEXT = re.compile(r"[ \t]*(?:[-*+>|][ \t]|\d{1,3}[.)][ \t])")
_INLINE_COMMENT = re.compile(r"<!--.*?-->")


@dataclass
class Block:
    kind: str  # "text" or "code"
    lines: list[str]
    linenos: list[int]  # original 1-based line number of each line

    @cached_property
    def text(self) -> str:
        return "\n".join(self.lines)

    def line_at(self, offset: int) -> int:
        return self.linenos[min(self.text.count("\n", 0, offset), len(self.linenos) - 1)]


@dataclass
class Section:
    path: list[tuple[int, str]]  # (level, text) of the headings above, outermost first
    blocks: list[Block] = field(default_factory=list)


def scan(lines: list[str], first_line: int = 1) -> tuple[list[Section], str | None]:
    """Sections in document order, and the text of the first H1 (the document title)."""
    scanner = _Scanner(lines, first_line)
    scanner.run()
    return [s for s in scanner.sections if s.blocks], scanner.title


class _Scanner:
    def __init__(self, lines: list[str], first_line: int) -> None:
        self.lines = lines
        self.first_line = first_line
        self.sections = [Section([])]
        self.stack: list[tuple[int, str]] = []
        self.para: list[tuple[int, str]] = []  # (line index, text) of the open text block
        # Open unwrapped directives, innermost last: (line index, column) of the closing `}`
        # and the indentation their content loses.
        self.containers: list[tuple[int, int, int]] = []
        self.title: str | None = None

    def run(self) -> None:
        i = 0
        while i < len(self.lines):
            i = self.step(i)
        self.end_para()

    def step(self, i: int) -> int:
        """Consume the construct starting at line `i`; the index of the next line."""
        line = self.lines[i]
        while self.containers and i > self.containers[-1][0]:
            self.containers.pop()  # closed on a line a dropped directive swallowed
        if self.containers and i == self.containers[-1][0]:
            _, col, _ = self.containers.pop()
            self.text_line(i, line[:col] + line[col + 1 :])
            self.end_para()
            return i + 1
        marker = fence_marker(line) if ("`" in line or "~" in line) else None
        if marker:
            return self.fence(i, marker)
        stripped = line.strip()
        if not stripped:
            self.end_para()
            return i + 1
        if stripped.startswith("<!--"):
            return self.html_comment(i)
        if stripped.startswith("@") and (
            directive := find_directive(self.lines, i, nested=bool(self.containers))
        ):
            return self.directive(i, directive)
        if stripped.startswith("#") and (m := _ATX.match(line)):
            self.heading(len(m.group(1)), m.group(2) or "")
            return i + 1
        if self.para and (m := _SETEXT.match(line)) and self.setext_candidate():
            text = " ".join(t.strip() for _, t in self.para)
            self.para = []
            self.heading(1 if m.group(1)[0] == "=" else 2, text)
            return i + 1
        if _THEMATIC.match(line):
            self.end_para()  # a rule separates blocks but holds no words
            return i + 1
        self.text_line(i, line)
        return i + 1

    def text_line(self, i: int, line: str) -> None:
        if self.containers:
            # Content indented inside `@Row { @Column { … } }` is not an indented code block.
            indent = len(line) - len(line.lstrip())
            line = line[min(indent, self.containers[-1][2]) :]
        if "<!--" in line:
            line = _INLINE_COMMENT.sub("", line)
        if line.strip():
            self.para.append((i, readable_links(line.rstrip())))

    def end_para(self) -> None:
        if self.para:
            self.add_block("text", [t for _, t in self.para], [i for i, _ in self.para])
            self.para = []

    def add_block(self, kind: str, lines: list[str], indexes: list[int]) -> None:
        linenos = [self.first_line + i for i in indexes]
        self.sections[-1].blocks.append(Block(kind, lines, linenos))

    def setext_candidate(self) -> bool:
        # List items, quotes and table rows followed by `---` are a list and a rule.
        return not _NOT_SETEXT_TEXT.match(self.para[0][1])

    def fence(self, i: int, marker: str) -> int:
        self.end_para()
        j = i + 1
        while j < len(self.lines) and not closes_fence(self.lines[j], marker):
            j += 1
        last = min(j, len(self.lines) - 1)  # an unclosed fence runs to the end, as in CommonMark
        self.add_block("code", self.lines[i : last + 1], list(range(i, last + 1)))
        return last + 1

    def html_comment(self, i: int) -> int:
        self.end_para()
        for j in range(i, len(self.lines)):
            end = self.lines[j].find("-->", self.lines[i].find("<!--") + 4 if j == i else 0)
            if end >= 0:
                self.text_line(j, self.lines[j][end + 3 :])  # text after the comment stays
                return j + 1
        return i + 1  # never closed: drop the opening line only, not the rest of the file

    def directive(self, i: int, d: Directive) -> int:
        self.end_para()
        if d.dropped or d.inner is None:
            return d.last_line + 1
        open_line, open_col, close_line, close_col = d.inner
        if open_line == close_line:
            self.text_line(open_line, self.lines[open_line][open_col:close_col].strip())
            self.end_para()
            return close_line + 1
        self.text_line(open_line, self.lines[open_line][open_col:])
        inner = [t for t in self.lines[open_line + 1 : close_line] if t.strip()]
        indent = min((len(t) - len(t.lstrip()) for t in inner), default=0)
        self.containers.append((close_line, close_col, indent))
        return open_line + 1

    def heading(self, level: int, raw: str) -> None:
        self.end_para()
        text = readable_links(_INLINE_COMMENT.sub("", raw)).strip()
        if not text:
            return
        if level == 1 and self.title is None:
            self.title = text
        while self.stack and self.stack[-1][0] >= level:
            self.stack.pop()
        self.stack.append((level, text))
        self.sections.append(Section(list(self.stack)))
