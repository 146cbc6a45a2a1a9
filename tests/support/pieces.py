"""Invariants every code chunker's pieces hold, shared by the chunker tests."""

from __future__ import annotations

from chunkers.config import ChunkConfig
from chunkers.model import Piece


def assert_every_line_kept(text: str, pieces: list[Piece]) -> None:
    """Each non-blank line is in a piece by its number, and its text in the contents of those
    pieces, taken in order: a line may be shared by two pieces (`struct A {}; struct B {}`,
    or a line alone over the limit, cut at token boundaries)."""
    for number, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        holders = [p for p in pieces if p.start_line <= number <= p.end_line]  # type: ignore[operator]
        assert holders, f"line {number} is in no piece: {line!r}"
        assert squeezed(line) in squeezed("".join(p.content for p in holders)), (
            f"line {number} lost: {line!r}"
        )


def squeezed(text: str) -> str:
    return "".join(text.split())


def assert_within_limit(cfg: ChunkConfig, pieces: list[Piece]) -> None:
    counts = cfg.counter.count_many([p.content for p in pieces])
    assert max(counts, default=0) <= cfg.max_tokens
