"""The BM25 text analyzer shared by every index store.

Documents and queries go through the same function, so an identifier split the same way on
both sides: searching `navigation` finds `NavigationStack`, and `url session` finds
`URLSession`. Stores index the analysed tokens joined by spaces; the store's own tokenizer
then only has to split on spaces (and must keep `_` inside tokens).

Rules (deterministic, no locale):

* Tokens are runs of word characters (`\\w`: unicode letters, digits, underscore), lowercased.
* A token that is a code identifier also contributes its parts, after the raw token:
  - split on `_` (`snake_case_name` -> `snake`, `case`, `name`; `__init__` -> `init`);
  - split at ASCII case changes: lower/digit -> Upper (`NavigationStack`, `Base64Encoder`)
    and the end of an acronym (`URLSession` -> `url`, `session`).
  Digits stay attached to the part before them (`HTTP2Client` -> `http2`, `client`;
  `H264Decoder` -> `h264`, `decoder`), since `http2` is what people search for.
  One-letter parts (`iPhone` -> `i`) are dropped as noise; the raw token still carries them.
  Case changes between non-ASCII letters are not split (rare in code, and costly to detect).
* Documents keep every token (term frequency matters to BM25). `analyze_query` also drops a
  small list of English stopwords and repeated terms, because a query is an OR of its terms
  and "the" would match nearly everything; a query of stopwords only keeps them.
"""

from __future__ import annotations

import re
from functools import lru_cache

_WORD = re.compile(r"\w+")
# Zero-width split points inside one `_`-free segment (also where code is split into words
# for embedding: loaders/stages.py).
CASE_CHANGE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")

# Short on purpose: only words that carry no meaning in developer questions. Words like
# "not", "new", "get", "set", "in", "for", "if" stay because they are keywords or API names.
STOPWORDS = frozenset(
    {
        "a", "an", "and", "are", "as", "at", "be", "but", "by", "do", "does", "how", "i",
        "is", "it", "its", "me", "my", "of", "on", "or", "so", "that", "the", "their", "them",
        "then", "there", "these", "this", "those", "to", "was", "what", "when", "where",
        "which", "who", "why", "will", "with", "you", "your",
    }
)  # fmt: skip


@lru_cache(maxsize=1 << 17)
def _expand(token: str) -> tuple[str, ...]:
    """The lowercased token followed by its identifier parts (when they add anything)."""
    lowered = token.lower()
    if lowered == token and "_" not in token:
        return (lowered,)
    parts: list[str] = []
    for segment in token.split("_"):
        if segment:
            parts.extend(p.lower() for p in CASE_CHANGE.split(segment) if len(p) > 1)
    if not parts or parts == [lowered]:
        return (lowered,)
    return (lowered, *parts)


def analyze(text: str) -> list[str]:
    """Index-side tokens of `text`, in order, repeats kept (BM25 counts them)."""
    # One cached expansion per distinct word: measured faster than splitting the whole text
    # with extra regex passes, since most words repeat.
    out: list[str] = []
    extend = out.extend
    for token in _WORD.findall(text):
        extend(_expand(token))
    return out


def analyze_query(text: str) -> list[str]:
    """Query-side terms: `analyze` without stopwords and without repeats, in first-seen order."""
    tokens = analyze(text)
    unique = list(dict.fromkeys(tokens))
    kept = [t for t in unique if t not in STOPWORDS]
    return kept or unique


class _ExpandedWords(dict[str, str]):
    """Token -> its expansion joined by spaces, computed once per distinct token."""

    def __missing__(self, token: str) -> str:
        if len(self) >= _CACHE_LIMIT:
            self.clear()  # bounded memory on huge vocabularies; refills with what recurs
        joined = self[token] = " ".join(_expand(token))
        return joined


class _ExpandedBytes(dict[bytes, bytes]):
    """The same for ASCII tokens as bytes."""

    def __missing__(self, token: bytes) -> bytes:
        if len(self) >= _CACHE_LIMIT:
            self.clear()
        joined = self[token] = " ".join(_expand(token.decode("ascii"))).encode("ascii")
        return joined


_CACHE_LIMIT = 1 << 17
_WORDS = _ExpandedWords()
_ASCII_WORDS = _ExpandedBytes()
# Every ASCII byte that `\w` does not match becomes a space, so `bytes.split()` yields
# exactly the tokens `_WORD.findall` finds in ASCII text.
_ASCII_NON_WORD_TO_SPACE = bytes(
    c if (chr(c).isascii() and chr(c).isalnum()) or c == ord("_") else ord(" ") for c in range(256)
)


# Bump whenever `analyze` (hence `analyzed_text`) yields other tokens for any text: a SQLite
# index keeps no copy of the analysed text, deletes its full-text rows by analysing the
# chunks again, and re-indexes every chunk when it was written by another version
# (sql/sqlite/migrations/0003_fts_contentless.sql).
ANALYZER_VERSION = 1


def analyzed_text(*parts: str | None) -> str:
    """The space-joined tokens of several fields, as a store indexes them:
    exactly `" ".join(analyze(...))`, computed faster because loads spend most of their
    Python time here. ASCII text (most chunks) is tokenised with one `bytes.translate`
    and `split` instead of a regex; every text maps its tokens through a per-token cache
    in C (`map` over a dict) instead of a Python loop."""
    text = " ".join(p for p in parts if p)
    if text.isascii():
        tokens = text.encode("ascii").translate(_ASCII_NON_WORD_TO_SPACE).split()
        return b" ".join(map(_ASCII_WORDS.__getitem__, tokens)).decode("ascii")
    return " ".join(map(_WORDS.__getitem__, _WORD.findall(text)))
