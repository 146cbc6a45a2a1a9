"""Deduplication of fused candidates: the same passage from two indexes or two documents is
shown once."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from core.store.text_key import EMPTY_TEXT_KEY, normalised_text
from query.types import Candidate

# Texts equal once normalised share their first words, so those words key the duplicate
# check and the whole text is normalised only when two keys meet: normalising every
# candidate's content was ~1 ms of each query's fusion at 100k chunks.
PREFIX_WORDS = 16


def _prefix_key(text: str) -> str:
    return " ".join(text.split(None, PREFIX_WORDS)[:PREFIX_WORDS]).lower()


def dedupe_by_text(candidates: Sequence[Candidate]) -> tuple[list[Candidate], int]:
    """Keep the first (best-ranked) of candidates whose contents are equal once whitespace is
    collapsed and case folded: the same passage from two indexes or two documents is shown once.
    Candidates without a fetched row (content unknown) are kept. Returns (kept, dropped)."""
    # prefix key -> the first kept content with it, then (once a second one comes) the
    # normalised contents of all kept candidates with it
    seen: dict[str, str | list[str]] = {}
    kept: list[Candidate] = []
    for cand in candidates:
        raw = (cand.row.get("content") or "") if cand.row else ""
        key = _prefix_key(raw)
        if key:
            earlier = seen.get(key)
            if earlier is None:
                seen[key] = raw
            else:
                if isinstance(earlier, str):
                    earlier = seen[key] = [normalised_text(earlier)]
                text = normalised_text(raw)
                if text in earlier:
                    continue
                earlier.append(text)
        kept.append(cand)
    return kept, len(candidates) - len(kept)


def dedupe_by_key(
    candidates: Sequence[Candidate],
    fetch: Callable[[list[Candidate]], list[Candidate]],
) -> tuple[list[Candidate], int]:
    """What `dedupe_by_text` keeps, read from the candidates' `text_key`s (the fingerprint
    of the normalised content, core/store/text_key.py) instead of their texts. Equal texts
    have equal keys, so a candidate whose key no other candidate shares is kept without its
    text; only the candidates whose keys meet, or that have none (rows stored before keys
    were), get their whole rows from `fetch` and are compared by text, so two different
    passages whose keys collide both stay. `fetch` attaches whole rows in place and returns
    the candidates it found (a chunk deleted meanwhile is dropped, as a fetch drops it).
    Returns (kept, dropped as duplicates)."""
    counts: dict[int | None, int] = {}
    for cand in candidates:
        counts[cand.text_key] = counts.get(cand.text_key, 0) + 1
    if None in counts:
        # Some row has no key: any other may equal it, so every text is compared.
        compared = list(candidates)
    else:
        # Wordless chunks share one key and are never duplicates of each other.
        compared = [
            c for c in candidates if counts[c.text_key] > 1 and c.text_key != EMPTY_TEXT_KEY
        ]
    if not compared:
        return list(candidates), 0
    found = {id(c) for c in fetch(compared)}
    kept_compared, dropped = dedupe_by_text([c for c in compared if id(c) in found])
    gone = {id(c) for c in compared} - {id(c) for c in kept_compared}
    return [c for c in candidates if id(c) not in gone], dropped
