"""Sizes and helpers every chunker receives."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from core.tokens import TokenCounter

# Maps sentences/windows to L2-normalised vectors (numpy array, one row per text).
SentenceEmbedder = Callable[[Sequence[str]], "object"]


_COUNT_CACHE_LIMIT = 4096


@dataclass
class ChunkConfig:
    counter: TokenCounter
    target_tokens: int = 400
    max_tokens: int = 512
    overlap_tokens: int = 40
    chat_window: int = 5
    # Optional: used to find topic shifts in unstructured prose. None = size-based fallback.
    sentence_embedder: SentenceEmbedder | None = None
    # Record what each code piece declares and uses (chunkers.code.references). Off only to
    # measure what the extraction costs (bench/chunking.py times both in one run).
    references: bool = True

    def __post_init__(self) -> None:
        self._counts: dict[str, int] = {}

    def count(self, text: str) -> int:
        # Chunkers size a piece when they cut it and the pipeline records its size again;
        # tokenizing dominates chunking time, so each distinct text is counted once.
        n = self._counts.get(text)
        if n is None:
            if len(self._counts) >= _COUNT_CACHE_LIMIT:
                self._counts.clear()
            n = self._counts[text] = self.counter.count(text)
        return n
