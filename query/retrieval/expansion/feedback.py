"""Pseudo-relevance feedback: the terms most shared by the top BM25 hits of the question."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from core.frameworks import ALIASES
from core.store.analyzer import analyze
from query.retrieval.expansion.words import STOPWORDS, TOKEN, is_identifier, stem

FEEDBACK_TERMS = 4

# The words of the frameworks' spelled-out names alone ("Core" of "Core Data") are
# fragments, never feedback terms.
_ALIAS_WORDS = frozenset(word for alias in ALIASES for word in alias.lower().split())

# Words every code chunk is full of (keywords, common type and doc words): fine in a
# question, never worth adding to one as a feedback term.
CODE_NOISE = frozenset(
    {
        "any", "as", "async", "await", "bool", "case", "class", "def", "default", "double", "else",
        "enum", "extension", "false", "final", "float", "func", "function", "guard", "import",
        "init", "instance", "int", "internal", "lambda", "let", "method", "nil", "none", "object",
        "override", "parameter", "parameters", "pass", "private", "property", "protocol", "public",
        "return", "returns", "self", "some", "static", "string", "struct", "switch", "throws",
        "true", "try", "type", "value", "values", "var", "void", "where", "with", "yield",
        "app", "apps", "code", "data", "file", "files", "item", "items", "list", "name",
        "names", "text", "user", "users",
    }
)  # fmt: skip


def feedback_terms(
    texts: Sequence[str], *, exclude: str = "", n: int = FEEDBACK_TERMS
) -> list[str]:
    """The terms that best characterise the top hits: those found in most of them (document
    frequency across the feedback set), then by total frequency, code identifiers ahead of
    plain words at a tie. Stopwords, numbers, short tokens and anything the excluded text
    (the question) already contains are never picked. With several hits a term must occur in
    at least two, so one document's peculiarities do not steer the search."""
    docs = [t for t in texts if isinstance(t, str) and t.strip()]
    if not docs:
        return []
    excluded = set(analyze(exclude)) | {t.lower() for t in TOKEN.findall(exclude)}
    excluded |= {stem(t) for t in excluded} | _ALIAS_WORDS
    df: Counter[str] = Counter()
    tf: Counter[str] = Counter()
    spelling: dict[str, Counter[str]] = {}
    for doc in docs:
        seen = set()
        for match in TOKEN.finditer(doc):
            token = match[0].strip(".")
            key = token.lower()
            if not _feedback_candidate(token, key, excluded):
                continue
            tf[key] += 1
            spelling.setdefault(key, Counter())[token] += 1
            seen.add(key)
        df.update(seen)
    min_df = 2 if len(docs) >= 2 else 1

    def rank(key: str) -> tuple[int, float, str]:
        written = spelling[key].most_common(1)[0][0]
        code_bonus = 0.5 if is_identifier(written) else 0.0
        return (-df[key], -(math.log1p(tf[key]) + code_bonus), key)

    ranked = sorted((key for key in df if df[key] >= min_df), key=rank)
    return [spelling[key].most_common(1)[0][0] for key in ranked[:n]]


def _feedback_candidate(token: str, key: str, excluded: set[str]) -> bool:
    if len(key) < 3 or len(key) > 40 or key in STOPWORDS or key in CODE_NOISE:
        return False
    if key in excluded or stem(key) in excluded:
        return False
    parts = analyze(token)
    # An identifier whose words are all in the question adds nothing new.
    return not (len(parts) > 1 and set(parts[1:]) <= excluded)
