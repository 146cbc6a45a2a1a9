"""Token-bounded windows over text: the fallback every chunker relies on for the hard limit."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from chunkers.config import ChunkConfig
from chunkers.packing import pack_counts, trailing


@dataclass
class Window:
    text: str
    start_line: int  # 1-based, inclusive
    end_line: int
    # Character offsets of the window in the text given, for callers that number lines
    # differently from str.splitlines().
    start: int
    end: int


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
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))

    def fits(group: list[int]) -> bool:
        # Additivity of counts across lines holds for whitespace-splitting tokenizers; check.
        return cfg.count("".join(lines[group[0] : group[-1] + 1])) <= limit

    count: Callable[[int], int] = counts.__getitem__
    carry = trailing(count, overlap) if overlap else None
    windows: list[Window] = []
    for i, j in pack_counts(counts, limit, carry=carry, fits=fits):
        if counts[i] > limit:
            start = offsets[i]
            for part in cut_at_tokens(lines[i], cfg, limit):
                windows.append(
                    Window(part, first_line + i, first_line + i, start, start + len(part))
                )
                start += len(part)
            continue
        body = "".join(lines[i : j + 1])
        windows.append(Window(body, first_line + i, first_line + j, offsets[i], offsets[j + 1]))
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
