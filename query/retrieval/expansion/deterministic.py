"""The deterministic path: search variants without an LLM, from identifier splitting,
framework vocabulary, feedback terms and the question's keyword form."""

from __future__ import annotations

from collections.abc import Sequence

from query.retrieval.expansion.feedback import feedback_terms
from query.retrieval.expansion.variants import add_variants
from query.retrieval.expansion.vocabulary import frameworks_of, vocabulary_terms
from query.retrieval.expansion.words import content_words, split_identifiers


def deterministic_variants(
    query: str,
    *,
    domain: str | None = None,
    frameworks: Sequence[str] = (),
    feedback_texts: Sequence[str] = (),
    limit: int = 5,
) -> tuple[list[str], list[str]]:
    """(variants with the original first, names of the expansions that added one)."""
    core = content_words(query)
    keyword_form = " ".join(core)
    candidates: list[tuple[str, str]] = []

    split = split_identifiers(query)
    if split != query:
        candidates.append(("identifier splitting", split))

    named = frameworks_of(query, frameworks, domain)
    vocab = vocabulary_terms(query, named)
    if vocab:
        missing = [
            name for name in named if name.lower() not in {w.lower() for w in core}
        ]  # fmt: skip
        label = f"framework vocabulary ({', '.join(named)})"
        candidates.append((label, " ".join([*core, *missing, *vocab])))

    prf = feedback_terms(feedback_texts, exclude=query)
    if prf:
        label = f"feedback terms from {len(feedback_texts)} BM25 hit(s)"
        candidates.append((label, " ".join([*core, *prf])))

    if keyword_form and keyword_form.casefold() != query.casefold():
        # Last: it only narrows the original, so it is the weakest variant.
        candidates.append(("keyword form", keyword_form))

    variants = [query]
    parts = []
    for label, text in candidates:
        if len(variants) >= limit:
            break
        grown = add_variants(variants, [text])
        if len(grown) > len(variants):
            variants = grown
            parts.append(label)
    return variants, parts
