"""What every caller of the pipeline reads in an answer, without importing the pipeline: a
usage error (a `--store` that names no store among them), and the mark of a degraded answer
(the CLI and the worker client need both before, or instead of, loading the engine)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.store.errors import InvalidLocation
from core.store.location import StoreLocation

# Notes that start with this say the answer is worse than the configured pipeline's.
DEGRADED = "degraded: "


class UsageError(ValueError):
    """A request that cannot be run as given; the message says what to change."""


def store_location(store: str) -> StoreLocation:
    """`--store` (or a request's store) parsed; one that cannot name a store is a usage error."""
    try:
        return StoreLocation.parse(store)
    except InvalidLocation as exc:
        raise UsageError(str(exc)) from None


def is_degraded(response: Mapping[str, Any]) -> bool:
    return any(str(n).startswith(DEGRADED) for n in response.get("notes") or ())
