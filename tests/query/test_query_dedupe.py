"""Deduplication of fused candidates: by text, and by text_key without reading the text."""

from __future__ import annotations

from query.retrieval.dedupe import dedupe_by_key, dedupe_by_text
from query.types import Candidate
from tests.support.query import row


def test_duplicate_text_keeps_only_the_best_ranked_copy():
    best = Candidate("a", "one", row=row("a", "Use  NavigationStack\n instead"), score=0.3)
    copy = Candidate("b", "two", row=row("b", "use navigationstack instead"), score=0.2)
    other = Candidate("c", "one", row=row("c", "something else"), score=0.1)
    kept, dropped = dedupe_by_text([best, copy, other])
    assert [c.chunk_id for c in kept] == ["a", "c"]
    assert dropped == 1


def test_texts_sharing_their_opening_words_are_not_duplicates_unless_equal_throughout():
    opening = " ".join(f"word{i}" for i in range(40))
    first = Candidate("a", "i", row=row("a", opening + " ends one way"), score=0.3)
    second = Candidate("b", "i", row=row("b", opening + " ends another way"), score=0.2)
    third = Candidate("c", "i", row=row("c", opening.upper() + "\n ends  ANOTHER way"), score=0.1)
    kept, dropped = dedupe_by_text([first, second, third])
    assert [c.chunk_id for c in kept] == ["a", "b"]
    assert dropped == 1


def keyed(chunk_id: str, text: str, key: int) -> Candidate:
    """A candidate known by its text_key only (no row yet), and the row `fetch` would give."""
    cand = Candidate(chunk_id, "i", score=1.0, text_key=key)
    cand.row = {}
    ROWS[chunk_id] = row(chunk_id, text)
    return cand


ROWS: dict[str, dict] = {}


def fetch_rows(fetched: list[str]):
    def fetch(candidates: list[Candidate]) -> list[Candidate]:
        for cand in candidates:
            fetched.append(cand.chunk_id)
            cand.row = dict(ROWS[cand.chunk_id])
        return candidates

    return fetch


def test_candidates_with_keys_no_other_shares_are_kept_without_reading_their_text():
    fetched: list[str] = []
    kept, dropped = dedupe_by_key([keyed("a", "one", 1), keyed("b", "two", 2)], fetch_rows(fetched))
    assert [c.chunk_id for c in kept] == ["a", "b"] and dropped == 0
    assert fetched == []


def test_candidates_sharing_a_key_are_compared_by_text_and_the_later_copy_dropped():
    fetched: list[str] = []
    candidates = [keyed("a", "Same  TEXT", 7), keyed("b", "other", 8), keyed("c", "same text", 7)]
    kept, dropped = dedupe_by_key(candidates, fetch_rows(fetched))
    assert [c.chunk_id for c in kept] == ["a", "b"] and dropped == 1
    assert fetched == ["a", "c"]


def test_different_texts_whose_keys_collide_are_both_kept():
    candidates = [keyed("a", "one text", 7), keyed("b", "another text", 7)]
    kept, dropped = dedupe_by_key(candidates, fetch_rows([]))
    assert [c.chunk_id for c in kept] == ["a", "b"] and dropped == 0


def test_a_candidate_without_a_key_has_every_text_compared():
    fetched: list[str] = []
    candidates = [keyed("a", "same", 1), keyed("b", "SAME", 2)]
    candidates[1].text_key = None
    kept, _ = dedupe_by_key(candidates, fetch_rows(fetched))
    assert [c.chunk_id for c in kept] == ["a"] and fetched == ["a", "b"]
