"""Token-bounded windows over text: the fallback every chunker relies on for the hard limit."""

from __future__ import annotations

from dataclasses import dataclass

from chunkers.config import ChunkConfig


@dataclass
class Window:
    text: str
    start_line: int  # 1-based, inclusive
    end_line: int


def line_windows(
    text: str,
    cfg: ChunkConfig,
    *,
    first_line: int = 1,
    max_tokens: int | None = None,
    overlap_tokens: int | None = None,
) -> list[Window]:
    """Greedy windows of whole lines, each at most `max_tokens`, consecutive windows sharing
    up to `overlap_tokens` of trailing lines. A single line longer than the limit is cut at
    token boundaries. Every line of `text` lands in at least one window."""
    limit = max_tokens or cfg.max_tokens
    overlap = cfg.overlap_tokens if overlap_tokens is None else overlap_tokens
    lines = text.splitlines(keepends=True)
    if not lines:
        return []
    counts = cfg.counter.count_many(lines)
    windows: list[Window] = []
    i = 0
    while i < len(lines):
        if counts[i] > limit:
            for part in cut_at_tokens(lines[i], cfg, limit):
                windows.append(Window(part, first_line + i, first_line + i))
            i += 1
            continue
        total, j = 0, i
        while j < len(lines) and counts[j] <= limit and total + counts[j] <= limit:
            total += counts[j]
            j += 1
        body = "".join(lines[i:j])
        # Additivity of counts across lines holds for whitespace-splitting tokenizers; check.
        while cfg.count(body) > limit and j - i > 1:
            j -= 1
            body = "".join(lines[i:j])
        windows.append(Window(body, first_line + i, first_line + j - 1))
        if j >= len(lines):
            break
        back, k = 0, j
        while overlap and k - 1 > i and back + counts[k - 1] <= overlap:
            k -= 1
            back += counts[k]
        i = k if k > i else j
    return [w for w in windows if w.text.strip()]


def cut_at_tokens(text: str, cfg: ChunkConfig, limit: int) -> list[str]:
    """Cut one long string into consecutive parts of at most `limit` tokens, losing nothing."""
    offsets = cfg.counter.offsets(text)
    if len(offsets) <= limit:
        return [text]
    parts: list[str] = []
    start_char = 0
    for k in range(limit, len(offsets), limit):
        cut = offsets[k][0]
        parts.append(text[start_char:cut])
        start_char = cut
    parts.append(text[start_char:])
    # A cut inside a word can tokenise differently; halve any part that grew past the limit.
    return [p for part in parts for p in _halve_until_fits(part, cfg, limit) if p]


def _halve_until_fits(text: str, cfg: ChunkConfig, limit: int) -> list[str]:
    if len(text) <= 1 or cfg.count(text) <= limit:
        return [text]
    half = len(text) // 2
    return _halve_until_fits(text[:half], cfg, limit) + _halve_until_fits(text[half:], cfg, limit)
