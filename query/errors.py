"""What every caller of the pipeline reads in an answer, without importing the pipeline: a
usage error, and the mark of a degraded answer (the CLI and the worker client need both
before, or instead of, loading the engine)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# Notes that start with this say the answer is worse than the configured pipeline's.
DEGRADED = "degraded: "


class UsageError(ValueError):
    """A request that cannot be run as given; the message says what to change."""


def is_degraded(response: Mapping[str, Any]) -> bool:
    return any(str(n).startswith(DEGRADED) for n in response.get("notes") or ())
