"""Which fusion rule `auto` uses over the searched indexes: the rule their calibration chose
(query/calibration), adaptive or RRF; the adaptive rule for an index never calibrated, or
when the indexes searched together chose differently. The identifier floor applies unless a
searched index's calibration switched it off; the usage floor where every searched index's
calibration found it code."""

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


def calibrated_floor(record: str | None, key: str = "floor") -> bool | None:
    """Whether an index's calibration record keeps a floor of the adaptive rule: the
    identifier floor (`floor`, IDENTIFIER_KEYWORD_FLOOR) or the usage floor (`usage_floor`,
    USAGE_KEYWORD_FLOOR); None without a record or a readable value."""
    if not record:
        return None
    try:
        floor = json.loads(record).get(key)
    except (ValueError, AttributeError):
        return None
    return floor if isinstance(floor, bool) else None


def auto_floor(floors: Iterable[bool | None]) -> bool:
    """Whether `auto` fusion keeps the identifier floor over the searched indexes: unless a
    calibration found that it costs (False); the floor is the default."""
    return all(floor is not False for floor in floors)


def auto_usage_floor(floors: Iterable[bool | None]) -> bool:
    """Whether the usage floor applies over the searched indexes: only where every one's
    calibration found it code (an index never calibrated is not known to be)."""
    found = list(floors)
    return bool(found) and all(floor is True for floor in found)


def auto_rule(rules: Iterable[str | None]) -> tuple[str, bool]:
    """(the rule `auto` fuses with, whether a calibration chose it) for the searched indexes'
    calibrated rules: theirs when they all chose the same, else the uncalibrated rule."""
    chosen = set(rules)
    if len(chosen) == 1 and None not in chosen:
        return str(chosen.pop()), True
    return UNCALIBRATED_RULE, False
