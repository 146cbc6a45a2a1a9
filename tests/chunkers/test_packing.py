"""What `chunkers.packing` promises every chunker that packs counted units into pieces."""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import given
from hypothesis import strategies as st

from chunkers.packing import pack, pack_by, pack_counts, trailing

counts_lists = st.lists(st.integers(0, 60), max_size=40)
budgets = st.integers(1, 100)
overlaps = st.integers(0, 50)


def ident(n: int) -> int:
    return n


def count(unit: tuple[int, int]) -> int:
    return unit[1]


def spans(counts: list[int], groups: list[tuple[int, int]]) -> list[list[int]]:
    return [counts[a : b + 1] for a, b in groups]


# --- without overlap ----------------------------------------------------------------------


def test_nothing_to_pack_gives_no_groups() -> None:
    assert pack([], ident, 10) == []
    assert pack_counts([], 10) == []


def test_units_are_packed_greedily_up_to_the_budget() -> None:
    assert pack([3, 4, 3, 5, 1], ident, 10) == [[3, 4, 3], [5, 1]]


def test_a_group_may_fill_the_budget_exactly() -> None:
    assert pack([6, 4, 1], ident, 10) == [[6, 4], [1]]


def test_a_unit_over_the_budget_is_a_group_by_itself() -> None:
    assert pack([2, 15, 3], ident, 10) == [[2], [15], [3]]


def test_a_unit_over_the_budget_is_alone_even_after_units_without_tokens() -> None:
    assert pack([0, 15, 0], ident, 10) == [[0], [15], [0]]


@given(counts_lists, budgets)
def test_every_unit_is_in_exactly_one_group_in_order(counts: list[int], budget: int) -> None:
    groups = pack(list(enumerate(counts)), count, budget)
    assert [u for g in groups for u in g] == list(enumerate(counts))
    assert all(groups)


@given(counts_lists, budgets)
def test_groups_of_several_units_stay_within_the_budget(counts: list[int], budget: int) -> None:
    for group in pack(counts, ident, budget):
        assert len(group) == 1 or sum(group) <= budget


@given(counts_lists, budgets)
def test_a_group_ends_only_where_the_next_unit_would_not_fit(
    counts: list[int], budget: int
) -> None:
    groups = pack(counts, ident, budget)
    for group, following in zip(groups, groups[1:], strict=False):
        assert sum(group) + following[0] > budget


@given(counts_lists, budgets)
def test_pack_counts_gives_first_and_last_index_of_each_group(
    counts: list[int], budget: int
) -> None:
    assert spans(counts, pack_counts(counts, budget)) == pack(counts, ident, budget)


# --- units that stand alone ---------------------------------------------------------------


def test_a_unit_that_stands_alone_is_a_group_of_its_own_even_when_it_would_fit() -> None:
    units = [("text", 2), ("window", 3), ("text", 2)]
    groups = pack(units, lambda u: u[1], 100, alone=lambda u: u[0] == "window")
    assert groups == [[("text", 2)], [("window", 3)], [("text", 2)]]


def test_no_overlap_is_carried_into_or_out_of_a_unit_that_stands_alone() -> None:
    carry = trailing(ident, overlap=100)
    groups = pack([1, 1, 50, 1, 1], ident, 10, alone=lambda n: n == 50, carry=carry)
    assert groups == [[1, 1], [50], [1, 1]]


# --- overlap ------------------------------------------------------------------------------


def test_the_next_group_opens_with_trailing_units_worth_at_most_the_overlap() -> None:
    groups = pack([4, 3, 2, 1, 5], ident, 10, carry=trailing(ident, overlap=3))
    assert groups == [[4, 3, 2, 1], [2, 1, 5]]


def test_the_first_unit_of_a_group_is_never_carried() -> None:
    groups = pack([1, 9, 9], ident, 10, carry=trailing(ident, overlap=100))
    assert groups == [[1, 9], [9], [9]]


def test_without_a_budget_carried_units_that_leave_no_room_are_a_group_of_their_own() -> None:
    groups = pack([5, 2, 9], ident, 10, carry=trailing(ident, overlap=3))
    assert groups == [[5, 2], [2], [9]]


def test_with_a_budget_overlap_leaves_room_for_the_following_unit() -> None:
    groups = pack([5, 2, 9], ident, 10, carry=trailing(ident, overlap=3, budget=10))
    assert groups == [[5, 2], [9]]


@given(counts_lists, budgets, overlaps)
def test_with_overlap_each_group_repeats_a_proper_tail_of_the_one_before(
    counts: list[int], budget: int, overlap: int
) -> None:
    groups = pack(list(enumerate(counts)), count, budget, carry=trailing(count, overlap))
    for before, after in zip(groups, groups[1:], strict=False):
        k = len([u for u in after if u in before])
        assert after[:k] == before[len(before) - k :]
        assert k < len(before)
        assert sum(map(count, after[:k])) <= overlap


@given(counts_lists, budgets, overlaps)
def test_with_overlap_every_unit_still_comes_in_order(
    counts: list[int], budget: int, overlap: int
) -> None:
    units = list(enumerate(counts))
    for room in (None, budget):
        carry = trailing(count, overlap, budget=room)
        groups = pack(units, count, budget, carry=carry)
        fresh: list[tuple[int, int]] = []
        before: list[tuple[int, int]] = []
        for group in groups:
            fresh += group[len([u for u in group if u in before]) :]
            before = group
        assert fresh == units


@given(counts_lists, budgets, overlaps)
def test_with_overlap_and_a_budget_no_group_holds_only_repeats(
    counts: list[int], budget: int, overlap: int
) -> None:
    units = list(enumerate(counts))
    carry = trailing(count, overlap, budget=budget)
    groups = pack(units, count, budget, carry=carry)
    for before, after in zip(groups, groups[1:], strict=False):
        assert after[-1] not in before
    for group in groups:
        assert len(group) == 1 or sum(map(count, group)) <= budget


def test_a_custom_carry_may_open_the_next_group_with_new_units() -> None:
    def last_half(group: list[int], following: int) -> list[int]:
        return [group[-1] // 2]

    assert pack([6, 6, 6], ident, 10, carry=last_half) == [[6], [3, 6], [3, 6]]


# --- a recount of the whole group ---------------------------------------------------------


def test_a_group_that_fails_its_recount_gives_back_its_last_units() -> None:
    groups = pack([1, 1, 1, 1, 1], ident, 10, fits=lambda g: len(g) <= 2)
    assert groups == [[1, 1], [1, 1], [1]]


def test_a_recount_never_empties_a_group() -> None:
    assert pack([1, 1], ident, 10, fits=lambda g: False) == [[1], [1]]


def test_units_given_back_come_next_after_the_overlap() -> None:
    units = list(enumerate([2, 1, 1, 3]))
    carry = trailing(count, overlap=1)
    groups = pack(units, count, 10, carry=carry, fits=lambda g: sum(map(count, g)) <= 4)
    assert groups == [units[:3], [units[2], units[3]]]


# --- sizes that do not add up --------------------------------------------------------------


def one_word(word: str) -> list[str]:
    return [word]


def within(limit: int) -> Callable[[list[str], str], list[str] | None]:
    """Words joined by spaces, measured as the joined text: not a sum of the words."""

    def grow(group: list[str], word: str) -> list[str] | None:
        joined = group + [word]
        return joined if len(" ".join(joined)) <= limit else None

    return grow


def test_pack_by_grows_a_group_while_the_caller_says_it_fits() -> None:
    groups = pack_by(["ab", "cd", "ef", "gh"], one_word, within(9))
    assert groups == [["ab", "cd", "ef"], ["gh"]]


def test_pack_by_gives_a_unit_too_big_to_fit_anywhere_a_group_of_its_own() -> None:
    groups = pack_by(["ab", "toolong", "c"], one_word, within(3))
    assert groups == [["ab"], ["toolong"], ["c"]]


@given(st.lists(st.text(min_size=1, max_size=8), max_size=30), st.integers(1, 40))
def test_pack_by_keeps_every_unit_in_order(words: list[str], limit: int) -> None:
    groups = pack_by(words, one_word, within(limit))
    assert [w for g in groups for w in g] == words
    for group in groups:
        assert len(group) == 1 or len(" ".join(group)) <= limit
