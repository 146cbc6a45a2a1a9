"""Variant hygiene: cleaning a candidate search query and keeping one spelling of each."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

MAX_VARIANT_CHARS = 300  # a longer "rewrite" is an answer or an essay, not a search query


def clean_variant(text: Any) -> str | None:
    if not isinstance(text, str):
        return None
    text = " ".join(text.replace("**", "").split()).strip()
    while len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'`":
        text = text[1:-1].strip()
    if not text or len(text) > MAX_VARIANT_CHARS:
        return None
    return text


def unique_variants(texts: Iterable[Any]) -> list[str]:
    """Cleaned texts, first spelling kept for texts equal but for case and punctuation."""
    return add_variants([], texts)


def add_variants(variants: list[str], more: Iterable[Any]) -> list[str]:
    """`variants` as they are (the original query may be longer than any variant may be),
    then the cleaned texts of `more` that none of them equals."""
    out = {_variant_key(v): v for v in variants}
    for text in more:
        cleaned = clean_variant(text)
        key = _variant_key(cleaned) if cleaned else ""
        if key and cleaned:
            out.setdefault(key, cleaned)
    return list(out.values())


def _variant_key(text: str) -> str:
    return " ".join(re.findall(r"[@#\w.]+", text.casefold())).strip(".")
