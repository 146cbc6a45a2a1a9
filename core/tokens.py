"""Token counting with the embedding model's own tokenizer.

Chunk sizes and packing budgets are counted in the tokens the model will actually see;
estimates from word counts undercount code badly (identifiers split into many pieces).
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

_WHITESPACE_SPLITTING = frozenset({"BertPreTokenizer", "Whitespace", "WhitespaceSplit"})


class TokenizerNotFound(FileNotFoundError):
    """The model directory has no tokenizer.json."""


class TokenCounter:
    """Counts tokens without special tokens, truncation or padding."""

    def __init__(self, tokenizer_file: str | Path) -> None:
        from tokenizers import Tokenizer

        path = Path(tokenizer_file)
        if not path.is_file():
            raise TokenizerNotFound(f"no tokenizer at {path}")
        self.path = path
        self._tok = Tokenizer.from_file(str(path))
        self._tok.no_truncation()
        self._tok.no_padding()
        # A pre-tokenizer that splits at whitespace makes counts add up: the tokens of
        # "a\nb" are those of "a" then those of "b" (packing relies on it, query/pack.py).
        pre = json.loads(self._tok.to_str()).get("pre_tokenizer") or {}
        self.additive = pre.get("type") in _WHITESPACE_SPLITTING

    def count(self, text: str) -> int:
        if not text:
            return 0
        return len(self._tok.encode(text, add_special_tokens=False).ids)

    def count_many(self, texts: list[str]) -> list[int]:
        if not texts:
            return []
        # The fast variant skips character offsets, which a count never needs.
        encodings = self._tok.encode_batch_fast(list(texts), add_special_tokens=False)
        return [len(e.ids) for e in encodings]

    def offsets(self, text: str) -> list[tuple[int, int]]:
        """Character span of every token, for cutting text at a token boundary."""
        return list(self._tok.encode(text, add_special_tokens=False).offsets)


@lru_cache(maxsize=8)
def counter_for_model(model: str) -> TokenCounter:
    """The counter of a model given as a local HF-format directory."""
    return TokenCounter(Path(model) / "tokenizer.json")
