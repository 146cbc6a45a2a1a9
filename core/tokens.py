"""Token counting with the embedding model's own tokenizer.

Chunk sizes and packing budgets are counted in the tokens the model will actually see;
estimates from word counts undercount code badly (identifiers split into many pieces).
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

_WHITESPACE_SPLITTING = frozenset({"BertPreTokenizer", "Whitespace", "WhitespaceSplit"})
# BERT's pre-tokenizer on printable ASCII: runs of letters and digits, and each punctuation
# character (every printable ASCII character that is neither) alone.
_ASCII_WORD = re.compile(r"[A-Za-z0-9]+|[!-/:-@\[-`{-~]")
# Past this many distinct words the cache starts afresh (a few MB at most).
_WORD_CACHE_LIMIT = 200_000


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
        config = json.loads(self._tok.to_str())
        # A pre-tokenizer that splits at whitespace makes counts add up: the tokens of
        # "a\nb" are those of "a" then those of "b" (packing relies on it, query/retrieval/pack.py).
        pre = config.get("pre_tokenizer") or {}
        self.additive = pre.get("type") in _WHITESPACE_SPLITTING
        self._words: dict[str, int] = {}
        self._word_safe = _word_sum_pattern(config)

    def count(self, text: str) -> int:
        if not text:
            return 0
        return self.count_many([text])[0]

    def count_many(self, texts: list[str]) -> list[int]:
        """Each text's count. Texts that a WordPiece model sees word by word (see
        `_word_sum_pattern`) are counted as the sum of their words' counts, each distinct word
        tokenized once: the tokenizer normalises and aligns every character, about 4 MB/s
        here, and code repeats its words far more than that costs to look up."""
        if not texts:
            return []
        counts: list[int | None] = [None] * len(texts)
        if self._word_safe is not None:
            unsafe = self._word_safe.search
            split = [None if unsafe(t) else _ASCII_WORD.findall(t) for t in texts]
            cached = self._learn({w for words in split if words for w in words}).__getitem__
            for i, words in enumerate(split):
                if words is not None:
                    counts[i] = sum(map(cached, words))
        rest = [i for i, n in enumerate(counts) if n is None]
        for i, n in zip(rest, self._tokenize([texts[i] for i in rest]), strict=True):
            counts[i] = n
        return [n or 0 for n in counts]

    def _learn(self, words: set[str]) -> dict[str, int]:
        """The word counts, with `words` among them. A full table is replaced, never
        cleared, so that a thread still summing with the old one finds its words there."""
        table = self._words
        new = [w for w in words if w not in table]
        if len(table) + len(new) > _WORD_CACHE_LIMIT:
            table, new = {}, list(words)
        if new:
            table.update(zip(new, self._tokenize(new), strict=True))
            self._words = table
        return table

    def _tokenize(self, texts: list[str]) -> list[int]:
        if not texts:
            return []
        # The fast variant skips character offsets, which a count never needs.
        encodings = self._tok.encode_batch_fast(texts, add_special_tokens=False)
        return [len(e.ids) for e in encodings]

    def offsets(self, text: str) -> list[tuple[int, int]]:
        """Character span of every token, for cutting text at a token boundary."""
        return list(self._tok.encode(text, add_special_tokens=False).offsets)


def _word_sum_pattern(config: dict[str, Any]) -> re.Pattern[str] | None:
    """For BERT's tokenizer (BertNormalizer, BertPreTokenizer, WordPiece), what a text must
    not contain for its count to be the sum of its `_ASCII_WORD`s' counts, else None (any
    other tokenizer: every text is tokenized whole). WordPiece tokenizes each pre-token on
    its own, so the sum is exact on text of printable ASCII, tabs and newlines without an
    added token: other control characters are deleted by the normaliser (joining words),
    non-ASCII characters may split or lose accents, and `[CLS]` is one token, not three."""
    normalizer = config.get("normalizer") or {}
    pre = config.get("pre_tokenizer") or {}
    model = config.get("model") or {}
    if (normalizer.get("type"), pre.get("type"), model.get("type")) != (
        "BertNormalizer",
        "BertPreTokenizer",
        "WordPiece",
    ):
        return None
    added = sorted((t["content"] for t in config.get("added_tokens") or ()), key=len)
    alternatives = [r"[^\t\n\r -~]", *(re.escape(a) for a in reversed(added) if a)]
    return re.compile("|".join(alternatives), re.IGNORECASE)


@lru_cache(maxsize=8)
def counter_for_model(model: str) -> TokenCounter:
    """The counter of a model given as a local HF-format directory."""
    return TokenCounter(Path(model) / "tokenizer.json")
