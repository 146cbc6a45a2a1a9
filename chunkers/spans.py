"""Helpers shared by the prose chunkers: offsets to line numbers, and the hard token limit."""

from __future__ import annotations

import re
from bisect import bisect_right

from chunkers.config import ChunkConfig
from chunkers.model import Piece
from chunkers.windows import line_windows

# Estimates are sums of per-unit counts. The embedding tokenizer pre-splits on whitespace,
# so joining units with whitespace adds nothing, but pieces near the limit are recounted to
# hold the limit with any tokenizer.
_RECOUNT_MARGIN = 16


class LineIndex:
    """1-based line numbers of character offsets in one text."""

    def __init__(self, text: str, first_line: int = 1) -> None:
        self._newlines = [m.start() for m in re.finditer("\n", text)]
        self._first = first_line

    def line(self, offset: int) -> int:
        return self._first + bisect_right(self._newlines, offset - 1)


def enforce_max(pieces: list[Piece], estimates: list[int], cfg: ChunkConfig) -> list[Piece]:
    """Recount pieces whose estimate is close to `cfg.max_tokens`; cut any that overflow into
    line windows that keep the piece's context and metadata."""
    suspects = [
        i for i, n in enumerate(estimates) if n + _RECOUNT_MARGIN + n // 32 > cfg.max_tokens
    ]
    counts = cfg.counter.count_many([pieces[i].content for i in suspects])
    over = {i for i, n in zip(suspects, counts, strict=True) if n > cfg.max_tokens}
    if not over:
        return pieces
    out: list[Piece] = []
    for i, piece in enumerate(pieces):
        if i not in over:
            out.append(piece)
            continue
        for w in line_windows(piece.content, cfg, first_line=piece.start_line or 1):
            out.append(
                Piece(
                    w.text,
                    context=piece.context,
                    start_line=w.start_line,
                    end_line=w.end_line,
                    kind=piece.kind,
                    metadata=dict(piece.metadata),
                )
            )
    return out
