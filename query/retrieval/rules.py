"""Which fusion rule `auto` uses over the searched indexes: the rule their calibration chose
(query/calibration), adaptive or RRF; the adaptive rule for an index never calibrated, or
when the indexes searched together chose differently. The identifier floor applies unless a
searched index's calibration switched it off."""

from __future__ import annotations

import json
from collections.abc import Iterable

# The rules a calibration may choose between, and the one an index without one uses.
CALIBRATED_RULES = ("adaptive", "rrf")
UNCALIBRATED_RULE = "adaptive"


def calibrated_rule(record: str | None) -> str | None:
    """The fusion rule an index's calibration record (JSON, query/calibration) chose; None
    without a record, or for one this version cannot read."""
    if not record:
        return None
    try:
        rule = json.loads(record).get("rule")
    except (ValueError, AttributeError):
        return None
    return rule if rule in CALIBRATED_RULES else None


def calibrated_floor(record: str | None) -> bool | None:
    """Whether an index's calibration record keeps the identifier floor
    (IDENTIFIER_KEYWORD_FLOOR); None without a record or a readable `floor`."""
    if not record:
        return None
    try:
        floor = json.loads(record).get("floor")
    except (ValueError, AttributeError):
        return None
    return floor if isinstance(floor, bool) else None


def auto_floor(floors: Iterable[bool | None]) -> bool:
    """Whether `auto` fusion keeps the identifier floor over the searched indexes: unless a
    calibration found that it costs (False); the floor is the default."""
    return all(floor is not False for floor in floors)


def auto_rule(rules: Iterable[str | None]) -> tuple[str, bool]:
    """(the rule `auto` fuses with, whether a calibration chose it) for the searched indexes'
    calibrated rules: theirs when they all chose the same, else the uncalibrated rule."""
    chosen = set(rules)
    if len(chosen) == 1 and None not in chosen:
        return str(chosen.pop()), True
    return UNCALIBRATED_RULE, False
