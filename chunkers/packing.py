"""Greedy packing of consecutive units into groups up to a token budget.

Every chunker cuts its text into units (statements, members, blocks, sentences, lines,
messages), counts them, and packs runs of consecutive units into pieces. The rules are here,
once:

* A unit joins the open group while the group stays within the budget, and always joins an
  empty one, so a unit over the budget is a group by itself. Chunkers pack to the target and
  cut whatever is still over the hard limit with their own fallback (line windows, member
  parts, cuts at words): only the caller knows where its units may be cut.
* Groups keep the units' order. Without overlap every unit is in exactly one group.
* Overlap is carried: the group after a full one opens with some of its trailing units
  (`trailing` picks whole units; a chunker may pick its own, such as the last sentences of
  a paragraph).

`pack` is for units whose counts add up (spans cut at whitespace, with a tokenizer that
splits there first); `fits` lets a caller recount a group whose counts may not. `pack_by`
is for groups whose size is not a sum at all (rendered text with separators or headings).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

T = TypeVar("T")
G = TypeVar("G")

# carry(full_group, following) -> the units that open the next group, before `following`.
Carry = Callable[[list[T], T], list[T]]


def pack(
    units: Iterable[T],
    tokens: Callable[[T], int],
    budget: int,
    *,
    alone: Callable[[T], bool] | None = None,
    carry: Carry[T] | None = None,
    fits: Callable[[list[T]], bool] | None = None,
) -> list[list[T]]:
    """Consecutive `units` in groups whose summed `tokens` stay within `budget`; a unit over
    the budget is a group by itself.

    `alone(unit)`: the unit is always a group of its own, and no overlap is carried into it
    (a window of a block that was already cut to size).

    `carry(group, following)`: overlap. When `following` does not fit in `group`, the next
    group opens with the units returned (a new list), and `following` is tried again after
    them; if it still does not fit, the carried units are a group of their own. Returning
    the whole group would repeat it forever: `trailing` never carries a group's first unit.

    `fits(group)`: a check of a complete group as a whole, when summed counts are only an
    estimate. A group that fails gives back its last unit, one at a time, until it passes or
    holds a single unit; the units given back come next."""
    todo = deque(units)
    groups: list[list[T]] = []
    group: list[T] = []
    total = 0
    while todo or group:
        if todo:
            unit = todo[0]
            single = alone is not None and alone(unit)
            if single and not group:
                groups.append([todo.popleft()])
                continue
            if not single:
                n = tokens(unit)
                if not group or total + n <= budget:
                    group.append(todo.popleft())
                    total += n
                    continue
        # The group is full: the next unit does not fit, stands alone, or there is none.
        while fits is not None and len(group) > 1 and not fits(group):
            todo.appendleft(group.pop())
        groups.append(group)
        following = todo[0] if todo else None
        group = []
        if carry is not None and following is not None and not (alone and alone(following)):
            group = carry(groups[-1], following)
        total = sum(map(tokens, group))
    return groups


def pack_counts(
    counts: Sequence[int],
    budget: int,
    *,
    carry: Carry[int] | None = None,
    fits: Callable[[list[int]], bool] | None = None,
) -> list[tuple[int, int]]:
    """`pack` over unit indexes, for callers that keep their units in lists: the first and
    last index (inclusive) of each group."""
    groups = pack(range(len(counts)), counts.__getitem__, budget, carry=carry, fits=fits)
    return [(group[0], group[-1]) for group in groups]


def trailing(tokens: Callable[[T], int], overlap: int, *, budget: int | None = None) -> Carry[T]:
    """Overlap of whole units: the longest run of trailing units of the full group worth at
    most `overlap` tokens, never its first unit, so that every group moves forward.

    With `budget`, the carried units must also leave room for the following unit within
    it; otherwise a group could hold nothing but units already in the one before."""

    def carry(group: list[T], following: T) -> list[T]:
        room = overlap if budget is None else min(overlap, budget - tokens(following))
        back, k = 0, len(group)
        while k - 1 > 0 and back + tokens(group[k - 1]) <= room:
            k -= 1
            back += tokens(group[k])
        return group[k:]

    return carry


def pack_by(
    units: Iterable[T], start: Callable[[T], G], grow: Callable[[G, T], G | None]
) -> list[G]:
    """Greedy groups of consecutive units when a group's size is not the sum of its units'
    (text rendered with separators, headings moved into the text): `grow(group, unit)` is
    the group with `unit` in it, or None when that would be over the caller's budget; the
    unit then starts a new group, `start(unit)`, which it always fits."""
    groups: list[G] = []
    for unit in units:
        grown = grow(groups[-1], unit) if groups else None
        if grown is None:
            groups.append(start(unit))
        else:
            groups[-1] = grown
    return groups
