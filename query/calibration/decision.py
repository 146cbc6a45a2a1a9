"""The decision calibration makes from its pairs' reciprocal ranks (query/calibration/
calibrate.py): the fusion rule, whether the adaptive rule's identifier floor applies, and
(from the index's shape) whether its usage floor does; and, pairs being costly (each one's
text is embedded), when the pairs scored so far already settle what all of them would
(`interim`).

The pairs decide when they are sure: RRF when its gain over the adaptive rule has a
one-sided 95 % bootstrap lower bound of at least MIN_GAIN, the adaptive rule when the upper
bound is at most -MIN_GAIN, over at least MIN_PAIRS pairs. Between the two, the default rule
(the adaptive one) stays.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from query.retrieval.rules import UNCALIBRATED_RULE

NORMAL = statistics.NormalDist()

DEFAULT_RULE = UNCALIBRATED_RULE
MIN_PAIRS = 100
# RRF must be surely better by at least this much reciprocal rank, the size of gain the
# project counts as one (0.01): mined pairs are a proxy for questions, and a sliver of an
# advantage there did not carry over (HotpotQA's title pairs: +0.008, lower bound +0.0004,
# where RRF costs 0.02 nDCG@10 on real questions).
MIN_GAIN = 0.01
BOOTSTRAP_ROUNDS = 2000
# The identifier floor is switched off only on this many pairs naming an identifier, at least.
MIN_FLOOR_PAIRS = 30
# An index is code, and takes the usage floor (query/retrieval/adaptive.py,
# USAGE_KEYWORD_FLOOR), when at least this share of its sampled chunks is in a code language.
# Every dev index is far from it either way: the four codebases 0.997-1.0, the four prose
# sets 0.0.
CODE_SHARE = 0.5
# Pairs are scored in looks of this many; after each (from MIN_PAIRS on), `interim` may end
# calibration early.
LOOK = 100
# An early decision needs a one-sided 99.9 % bound (Haybittle-Peto): looking five times at a
# 95 % bound would decide on noise more often than the final look alone.
INTERIM_Z = NORMAL.inv_cdf(0.999)
FINAL_Z = NORMAL.inv_cdf(0.95)
# The rest of the pairs are not scored when, even if the true gain were at the edge of the
# 95 % interval nearest a decision, all of them would decide with less than this chance.
FUTILITY = 0.01


def bounds(
    gains: Sequence[float], rounds: int = BOOTSTRAP_ROUNDS, seed: int = 0
) -> tuple[float, float]:
    """One-sided 95 % lower and upper bounds of the mean gain: the 5th and 95th percentiles
    of bootstrap means."""
    if not gains:
        return 0.0, 0.0
    rng = random.Random(seed)
    means = sorted(statistics.fmean(rng.choices(gains, k=len(gains))) for _ in range(rounds))
    return means[int(0.05 * rounds)], means[int(0.95 * rounds)]


def lower_bound(gains: Sequence[float], rounds: int = BOOTSTRAP_ROUNDS, seed: int = 0) -> float:
    """One-sided 95 % lower bound of the mean gain: the 5th percentile of bootstrap means."""
    return bounds(gains, rounds, seed)[0]


@dataclass(frozen=True)
class Shape:
    """What calibration reads of an index besides its pairs."""

    chunks_per_document: float
    prose_share: float  # of the sampled chunks, those not in a code language


def describe(shape: Shape) -> str:
    return f"{shape.prose_share:.0%} prose, {shape.chunks_per_document:.1f} chunks per document"


def choose(
    ranks: Mapping[str, Sequence[float]], shape: Shape | None = None
) -> tuple[str, list[float], str, str]:
    """(the rule, RRF's per-pair gains over the adaptive rule, what decided, why) from each
    rule's reciprocal ranks over the same pairs: the pairs when they are sure either way by
    MIN_GAIN, else the default rule.

    Not the index's shape: until fusion ranked documents by their best chunk in each leg,
    documentation split into many sections took RRF where the pairs could not decide, since
    the adaptive rule lost there (Swift docs 0.683 against 0.710). Ranked by document the two
    rules are within 0.005 on the Swift docs and the adaptive rule wins the Fastify docs by
    0.008, so the shape no longer tells them apart (docs/evaluation.md)."""
    gains = [r - a for a, r in zip(ranks["adaptive"], ranks["rrf"], strict=True)]
    fallback, decided_by = DEFAULT_RULE, "default"
    why = f"{describe(shape)}: the default rule" if shape is not None else "the default rule"
    if len(gains) < MIN_PAIRS:
        return fallback, gains, decided_by, f"{len(gains)} pairs, fewer than {MIN_PAIRS}: {why}"
    low, high = bounds(gains)
    evidence = (
        f"RRF gains {statistics.fmean(gains):+.4f} reciprocal rank over the adaptive rule "
        f"(95 % bounds {low:+.4f} to {high:+.4f}) on {len(gains)} pairs"
    )
    if low >= MIN_GAIN:
        return "rrf", gains, "pairs", evidence
    if high <= -MIN_GAIN:
        return "adaptive", gains, "pairs", evidence
    return fallback, gains, decided_by, f"{evidence}, too close to decide; {why}"


def choose_floor(on: Sequence[float], off: Sequence[float]) -> tuple[bool, str]:
    """(whether the identifier floor applies, why) from the adaptive rule's reciprocal ranks
    with and without it over the pairs that name an identifier: it stays unless those are
    MIN_FLOOR_PAIRS or more and surely worse with it."""
    gains = [a - b for a, b in zip(on, off, strict=True)]
    if len(gains) < MIN_FLOOR_PAIRS:
        return True, f"{len(gains)} pairs name an identifier: the floor stays"
    high = bounds(gains)[1]
    verdict = "the floor goes" if high < 0 else "the floor stays"
    return high >= 0, (
        f"the floor adds {statistics.fmean(gains):+.4f} reciprocal rank on {len(gains)} pairs "
        f"naming an identifier (95 % upper bound {high:+.4f}): {verdict}"
    )


def interim(gains: Sequence[float], total: int, floor_gains: Sequence[float] = ()) -> str | None:
    """Whether the pairs scored so far (`gains`: RRF over adaptive, per pair; `floor_gains`:
    the identifier floor's, over those naming one) end calibration before all `total`:
    "sure" when a rule is better by MIN_GAIN at a 99.9 % bound, "futile" when all the pairs
    could hardly decide the rule (see FUTILITY); either only once the floor is settled too
    (surely costly at 99.9 % over MIN_FLOOR_PAIRS, or hardly going to be found so). Else
    None. The decision is then `choose`'s and `choose_floor`'s over the pairs scored: sure
    ones decide as all would, futile ones leave the defaults, as all would but for that
    chance."""
    n = len(gains)
    if (
        n < MIN_PAIRS
        or n >= total
        or not _floor_settled(floor_gains, total * len(floor_gains) // n)
    ):
        return None
    mean, spread = statistics.fmean(gains), _spread(gains)
    margin = INTERIM_Z * spread / math.sqrt(n)
    if mean - margin >= MIN_GAIN or mean + margin <= -MIN_GAIN:
        return "sure"
    rule_open = max(
        _chance(gains, total, MIN_GAIN, toward=1), _chance(gains, total, MIN_GAIN, toward=-1)
    )
    return "futile" if rule_open < FUTILITY else None


def _floor_settled(gains: Sequence[float], total: int) -> bool:
    """Whether the floor's decision over all `total` pairs naming an identifier is as good as
    known from the first of them, `gains`: surely costly already, or hardly going to be."""
    if total < MIN_FLOOR_PAIRS or len(gains) < 2:
        return True  # too few to switch it off, however they score: it stays
    mean = statistics.fmean(gains)
    if statistics.pstdev(gains) == 0:
        # The floor changed every pair alike (most often: none): no spread to project from,
        # and the rest would have to differ from all of these for the decision to change.
        return mean >= 0 or len(gains) >= MIN_FLOOR_PAIRS
    spread = _spread(gains)
    if len(gains) >= MIN_FLOOR_PAIRS and mean + INTERIM_Z * spread / math.sqrt(len(gains)) < 0:
        return True
    return _chance(gains, total, 0.0, toward=-1) < FUTILITY


def _spread(values: Sequence[float]) -> float:
    # Identical gains (the rules agree on every pair so far) have no spread: a tiny one keeps
    # the arithmetic finite and says the rest is unlikely to differ.
    return max(statistics.stdev(values) if len(values) > 1 else 0.0, 1e-9)


def _chance(values: Sequence[float], total: int, beyond: float, *, toward: int) -> float:
    """The chance that the mean of `total` values, the first of which are `values`, has a 95 %
    one-sided bound beyond `beyond` in the direction `toward` (1: above it, -1: below -it),
    were the rest's true mean at the 95 % edge of the current estimate on that side."""
    n = len(values)
    rest = total - n
    if rest <= 0:
        return 0.0
    mean, spread = statistics.fmean(values), _spread(values)
    hoped = mean + toward * FINAL_Z * spread / math.sqrt(n)
    # The rest's mean that would put the final bound exactly at the threshold.
    needed = (
        total * (toward * beyond + toward * FINAL_Z * spread / math.sqrt(total)) - n * mean
    ) / rest
    z = toward * (needed - hoped) / (spread / math.sqrt(rest))
    return 1.0 - NORMAL.cdf(z)


def choose_usage_floor(shape: Shape) -> tuple[bool, str]:
    """(whether the usage floor applies, why): on an index that is mostly code. No pairs
    decide it: none mined from an index ask what uses a name, and the floor was measured on
    real usage questions (docs/evaluation.md)."""
    code = 1.0 - shape.prose_share
    if code >= CODE_SHARE:
        return True, f"{code:.0%} of the chunks are code: the usage floor applies"
    return False, f"{code:.0%} of the chunks are code: no usage floor"
