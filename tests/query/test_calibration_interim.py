"""Calibration scores its pairs in looks and stops once the pairs scored settle what all of
them would decide (query/calibration/decision.py, `interim`): a rule surely better at a
99.9 % bound ends it as "sure"; pairs that, even at the hopeful edge of their interval, could
hardly make all the pairs decide the rule or the identifier floor end it as "futile"."""

from __future__ import annotations

import random

from query.calibration.decision import MIN_PAIRS, choose, interim

TOTAL = 500


def noisy(mean: float, count: int, spread: float = 0.3, seed: int = 1) -> list[float]:
    rng = random.Random(seed)
    return [mean + rng.gauss(0.0, spread) for _ in range(count)]


def test_a_rule_surely_better_at_the_first_look_ends_calibration_as_sure():
    assert interim(noisy(0.2, 100), TOTAL) == "sure"
    assert interim(noisy(-0.2, 100), TOTAL) == "sure"


def test_a_gain_sure_only_at_the_final_looks_95_percent_waits_for_more_pairs():
    gains = noisy(-0.07, 100, spread=0.26)  # CoSQA's shape after 100 pairs
    ranks = {"adaptive": [0.5] * 100, "rrf": [0.5 + g for g in gains]}
    assert choose(ranks)[2] == "pairs"  # sure at 95 %...
    assert interim(gains, TOTAL) is None  # ...not at the 99.9 % an early look needs


def test_rules_that_agree_on_most_pairs_end_calibration_as_futile():
    gains = [0.0] * 190 + [0.5, -0.5] * 5  # mean 0, a few pairs each way
    assert interim(gains, TOTAL) == "futile"


def test_a_gain_that_could_still_reach_the_threshold_keeps_calibration_going():
    assert interim(noisy(0.006, 200, spread=0.16), TOTAL) is None


def test_fewer_pairs_than_the_minimum_or_all_of_them_never_stop_early():
    assert interim(noisy(0.5, MIN_PAIRS - 1), TOTAL) is None
    assert interim(noisy(0.5, TOTAL), TOTAL) is None


def test_an_identifier_floor_that_may_yet_cost_keeps_calibration_going():
    rules_agree = [0.0] * 190 + [0.5, -0.5] * 5
    floor_costs = noisy(-0.05, 20, spread=0.15)  # 50 of 500 pairs would name an identifier
    assert interim(rules_agree, TOTAL) == "futile"
    assert interim(rules_agree, TOTAL, floor_costs) is None


def test_a_floor_that_changed_no_pair_naming_an_identifier_does_not_hold_calibration():
    rules_agree = [0.0] * 190 + [0.5, -0.5] * 5
    assert interim(rules_agree, TOTAL, [0.0] * 20) == "futile"


def test_a_rule_surely_better_waits_for_a_floor_that_may_yet_cost():
    floor_costs = noisy(-0.05, 20, spread=0.15)
    assert interim(noisy(0.2, 200), TOTAL) == "sure"
    assert interim(noisy(0.2, 200), TOTAL, floor_costs) is None
