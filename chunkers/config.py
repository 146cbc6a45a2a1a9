"""Sizes and helpers every chunker receives."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from index.tokens import TokenCounter

# Maps sentences/windows to L2-normalised vectors (numpy array, one row per text).
SentenceEmbedder = Callable[[Sequence[str]], "object"]


@dataclass
class ChunkConfig:
    counter: TokenCounter
    target_tokens: int = 400
    max_tokens: int = 512
    overlap_tokens: int = 40
    chat_window: int = 5
    # Optional: used to find topic shifts in unstructured prose. None = size-based fallback.
    sentence_embedder: SentenceEmbedder | None = None

    def count(self, text: str) -> int:
        return self.counter.count(text)
