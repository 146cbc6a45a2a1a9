"""TokenCounter's counts are the tokenizer's own, however a text is counted."""

from __future__ import annotations

from pathlib import Path

import pytest
from tokenizers import Tokenizer

import core.tokens
from core.tokens import TokenCounter

POLYGLOT = Path(__file__).resolve().parents[1] / "fixtures/polyglot/repo"
SOURCES = sorted(
    p for p in POLYGLOT.rglob("*") if p.suffix in {".java", ".m", ".ts", ".hpp", ".rb", ".rs"}
)


def _reference(counter: TokenCounter, texts: list[str]) -> list[int]:
    tokenizer = Tokenizer.from_file(str(counter.path))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return [len(tokenizer.encode(t, add_special_tokens=False).ids) for t in texts]


def _texts() -> list[str]:
    """Whole files, their blank-line blocks and their lines."""
    out: list[str] = []
    for path in SOURCES:
        text = path.read_text(encoding="utf-8")
        out += [text, *text.split("\n\n"), *text.splitlines()]
    return out


def test_code_counts_equal_the_tokenizers(counter: TokenCounter) -> None:
    texts = _texts()
    assert counter.count_many(texts) == _reference(counter, texts)


@pytest.mark.parametrize(
    "text",
    [
        "return [CLS] token; x[mask]",  # added tokens are one token each
        "a\x0bb\x00c\x7fd",  # control characters the normaliser deletes, joining words
        "let café = naïve_日本語 // “quoted” 😀",
        "\ufffd\u2028tail",
        "x" * 150 + " short_word",  # a word over WordPiece's 100 characters is one [UNK]
        "",
    ],
)
def test_unusual_text_counts_equal_the_tokenizers(counter: TokenCounter, text: str) -> None:
    assert counter.count_many([text]) == _reference(counter, [text])
    assert counter.count(text) == _reference(counter, [text])[0]


def test_counts_stay_exact_after_the_word_table_fills(
    counter: TokenCounter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(core.tokens, "_WORD_CACHE_LIMIT", 5)
    texts = _texts()[:40]
    assert counter.count_many(texts) == _reference(counter, texts)
