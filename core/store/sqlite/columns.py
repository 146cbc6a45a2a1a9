"""The filterable columns of an index's chunks in memory, and `SearchFilter` as numpy masks
over them: one implementation for every in-memory search (vectors, keywords)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.store.contract import Hit
from core.store.filters import USER_CODEBASE, SearchFilter

_INT_MIN = np.iinfo(np.int64).min
_INT_MAX = np.iinfo(np.int64).max
_NULL_CODE = -1  # code of a NULL domain/source
_ABSENT_CODE = -2  # code of a requested value that no chunk has
# domain, source, ios_version_min_int, ios_version_max_int, deprecated, deprecated_in_int,
# framework_tags, last_verified: the order of the filter columns in sql/sqlite/read.sql.
FILTER_COLUMNS = 8


def _encode(values: Sequence[str | None]) -> tuple[np.ndarray, dict[str | None, int]]:
    vocab: dict[str | None, int] = {None: _NULL_CODE}
    codes = np.fromiter(
        (vocab.setdefault(v, len(vocab) - 1) for v in values), dtype=np.int32, count=len(values)
    )
    return codes, vocab


def _memberships(tag_lists: Sequence[str | None]) -> dict[str, np.ndarray]:
    """Framework tag -> positions of the rows carrying it, from JSON arrays."""
    members: dict[str, list[int]] = {}
    parsed: dict[str, frozenset[str]] = {}  # few distinct tag lists: parse each once
    for row, text in enumerate(tag_lists):
        if not text or text == "[]":
            continue
        tags = parsed.get(text)
        if tags is None:
            tags = parsed[text] = frozenset(json.loads(text))
        for tag in tags:
            members.setdefault(tag, []).append(row)
    return {tag: np.asarray(rows, dtype=np.int64) for tag, rows in members.items()}


def _ints(values: Sequence[int | None], null: int) -> np.ndarray:
    return np.fromiter(
        (null if v is None else v for v in values), dtype=np.int64, count=len(values)
    )


@dataclass
class FilterColumns:
    domain_codes: np.ndarray
    domain_vocab: dict[str | None, int]
    source_codes: np.ndarray
    source_vocab: dict[str | None, int]
    # NULL sentinels make the version rule a plain comparison: an absent min is below every
    # target, an absent max above, and an absent deprecated_in counts as "deprecated always".
    min_int: np.ndarray
    max_int: np.ndarray
    deprecated: np.ndarray
    deprecated_in_int: np.ndarray
    verified: np.ndarray  # first 10 characters of last_verified ("" when NULL)
    verified_null: np.ndarray
    framework_rows: dict[str, np.ndarray]  # tag -> row positions (sparse membership)

    @classmethod
    def from_columns(cls, cols: Sequence[Sequence[Any]]) -> FilterColumns:
        """The FILTER_COLUMNS columns, in their SQL order."""
        domain, source, min_int, max_int, deprecated, deprecated_in, tags, verified = cols
        n = len(domain)
        domain_codes, domain_vocab = _encode(domain)
        source_codes, source_vocab = _encode(source)
        return cls(
            domain_codes=domain_codes,
            domain_vocab=domain_vocab,
            source_codes=source_codes,
            source_vocab=source_vocab,
            min_int=_ints(min_int, _INT_MIN),
            max_int=_ints(max_int, _INT_MAX),
            deprecated=np.fromiter((bool(v) for v in deprecated), dtype=bool, count=n),
            deprecated_in_int=_ints(deprecated_in, _INT_MIN),
            verified=np.array(["" if v is None else str(v)[:10] for v in verified], dtype="U10"),
            verified_null=np.fromiter((v is None for v in verified), dtype=bool, count=n),
            framework_rows=_memberships(tags),
        )

    def __len__(self) -> int:
        return len(self.domain_codes)

    def mask(self, filt: SearchFilter) -> np.ndarray | None:
        """Rows that `filt.admits`, or None when the filter restricts nothing."""
        masks: list[np.ndarray] = []
        if filt.sources is not None:
            masks.append(_member(self.source_codes, self.source_vocab, filt.sources))
        if filt.domains is not None or not filt.include_user_codebase:
            # Only then: a comparison over every row (~20 µs at 100k) that an unfiltered
            # search, twice per query, would pay for nothing.
            user = self.source_codes == self.source_vocab.get(USER_CODEBASE, _ABSENT_CODE)
            if filt.domains is not None:
                ok = _member(self.domain_codes, self.domain_vocab, filt.domains)
                masks.append(ok | user if filt.include_user_codebase else ok)
            if not filt.include_user_codebase:
                masks.append(~user)
        target = filt.ios_version_int
        if target is not None:
            ok = (self.min_int <= target) & (self.max_int >= target)
            if not filt.include_deprecated:
                ok &= ~self.deprecated | (self.deprecated_in_int > target)
            masks.append(ok)
        if filt.frameworks_any is not None:
            ok = np.zeros(len(self), dtype=bool)
            for tag in set(filt.frameworks_any):
                rows = self.framework_rows.get(tag)
                if rows is not None:
                    ok[rows] = True
            masks.append(ok)
        cutoff = filt.freshness_cutoff()
        if cutoff is not None:
            masks.append(self.verified_null | (self.verified >= cutoff))
        if not masks:
            return None
        combined = masks[0].copy()
        for m in masks[1:]:
            combined &= m
        return combined


def text_keys(values: Sequence[int | None]) -> np.ndarray | None:
    """The rows' text_keys (core/store/text_key.py) as int64, for the hits of an in-memory
    search to carry; None when any row has none (written by a version before the keys), and
    the hits then carry none: fusion reads the keys from the rows instead."""
    if any(v is None for v in values):
        return None
    return np.fromiter(values, dtype=np.int64, count=len(values))


def hits(
    chunk_ids: Sequence[str],
    keys: np.ndarray | None,
    doc_ids: Sequence[str | None],
    rows: Sequence[int],
    scores: Sequence[float],
) -> list[Hit]:
    """The Hits of rows (positions) with their scores, each with its doc_id and its text_key
    if known."""
    docs = [doc_ids[r] for r in rows] if doc_ids else [None] * len(rows)
    if keys is None:
        return [Hit(chunk_ids[r], s, None, d) for r, s, d in zip(rows, scores, docs, strict=True)]
    found = keys[np.asarray(rows, dtype=np.int64)].tolist()
    return [
        Hit(chunk_ids[r], s, key, d) for r, s, key, d in zip(rows, scores, found, docs, strict=True)
    ]


def _member(
    codes: np.ndarray, vocab: dict[str | None, int], wanted: Iterable[str | None]
) -> np.ndarray:
    """codes isin wanted, via a lookup table (np.isin sorts, ~10x slower here)."""
    table = np.zeros(len(vocab) + 1, dtype=bool)  # codes run from -1 (NULL) to len-2
    for value in wanted:
        code = vocab.get(value)
        if code is not None:
            table[code + 1] = True
    result: np.ndarray = table[codes + 1]
    return result
