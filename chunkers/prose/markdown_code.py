"""Fenced code blocks over the hard limit → windows of whole lines, each re-wrapped in the
block's opening and closing fence so every piece is still a fenced block of its language.

Like `windows.line_windows`, but a line over the limit is cut between words rather than
inside one, so no identifier is broken in two, and the overlap always leaves room for a new
line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from chunkers.config import ChunkConfig
from chunkers.packing import pack_counts, trailing
from chunkers.prose.docc import closes_fence, fence_marker
from chunkers.prose.markdown_scan import Block
from chunkers.prose.sentences import Span, cut_at_words

_MIN_BUDGET = 32  # below this, the fences would eat the window: cut the block unwrapped


@dataclass
class CodeWindow:
    block: Block  # the window's text as a block of its own, with original line numbers
    tokens: int  # an upper bound: sum of line counts and fences


def code_windows(block: Block, cfg: ChunkConfig) -> list[CodeWindow]:
    """Windows of at most `cfg.max_tokens` tokens (by summed counts) over a fenced block,
    consecutive windows sharing up to `cfg.overlap_tokens` of whole lines."""
    opening, closing = _fences(block)
    fence_tokens = sum(cfg.counter.count_many([opening, closing])) if opening else 0
    budget = cfg.max_tokens - fence_tokens
    if budget < _MIN_BUDGET:
        opening, closing, fence_tokens, budget = "", "", 0, cfg.max_tokens
    text = block.text
    units = _line_units(text, _body_lines(text, opening, closing), cfg, budget)
    counts = [n for _, n in units]
    count: Callable[[int], int] = counts.__getitem__
    # Overlap must leave room for the next line, or a window could hold only repeated lines.
    carry = trailing(count, cfg.overlap_tokens, budget=budget)
    out = []
    for first, last in pack_counts(counts, budget, carry=carry):
        start, end = units[first][0][0], units[last][0][1]
        body = text[start:end]
        parts = [x for x in (opening, body, closing) if x]
        first_line, last_line = block.line_at(start), block.line_at(end - 1)
        lines = "\n".join(parts).split("\n")
        linenos = [min(max(first_line + k - 1, first_line), last_line) for k in range(len(lines))]
        if not opening:
            linenos = [min(first_line + k, last_line) for k in range(len(lines))]
        tokens = fence_tokens + sum(n for _, n in units[first : last + 1])
        out.append(CodeWindow(Block("code", lines, linenos), tokens))
    return out


def _fences(block: Block) -> tuple[str, str]:
    opening = block.lines[0]
    marker = fence_marker(opening) or "```"
    closed = len(block.lines) > 1 and closes_fence(block.lines[-1], marker)
    return opening, block.lines[-1] if closed else ""


def _body_lines(text: str, opening: str, closing: str) -> list[Span]:
    """Spans of the non-blank lines of `text`, without the fence lines when wrapping."""
    spans: list[Span] = []
    start = 0
    for line in text.split("\n"):
        if line.strip():
            spans.append((start, start + len(line)))
        start += len(line) + 1
    if opening:
        spans = spans[1:-1] if closing else spans[1:]
    return spans


def _line_units(
    text: str, lines: list[Span], cfg: ChunkConfig, budget: int
) -> list[tuple[Span, int]]:
    counts = cfg.counter.count_many([text[a:b] for a, b in lines])
    units: list[tuple[Span, int]] = []
    for (a, b), n in zip(lines, counts, strict=True):
        if n <= budget:
            units.append(((a, b), n))
            continue
        parts = cut_at_words(text, (a, b), cfg, budget)
        parts[0] = (a, parts[0][1])  # keep the line's indentation
        part_counts = cfg.counter.count_many([text[p:q] for p, q in parts])
        units += zip(parts, part_counts, strict=True)
    return units
