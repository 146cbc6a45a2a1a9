"""Metadata filters shared by every store, so that the embedded index and TiDB agree."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date
from typing import Any

USER_CODEBASE = "user_codebase"


@dataclass(frozen=True)
class SearchFilter:
    """Which chunks may be returned. None means "no restriction" for every field.

    Version rule for a target iOS version T (as `version_int`): a chunk qualifies when its
    min is absent or <= T and its max is absent or >= T. A chunk deprecated at or before T
    (or deprecated with no version) is excluded unless `include_deprecated`; one deprecated
    after T still serves older targets.
    """

    domains: tuple[str, ...] | None = None
    sources: tuple[str, ...] | None = None
    # Chunks whose source is the user's own code pass the domain filter whatever their domain.
    include_user_codebase: bool = True
    ios_version_int: int | None = None
    include_deprecated: bool = False
    # Strict overlap with the chunk's framework tags.
    frameworks_any: tuple[str, ...] | None = None
    fresh_within_days: int | None = None
    today: date | None = None  # for freshness; None = date.today() at query time

    def freshness_cutoff(self) -> str | None:
        """ISO date: chunks whose last_verified is older are excluded (unknown dates pass)."""
        if self.fresh_within_days is None:
            return None
        from datetime import timedelta

        return ((self.today or date.today()) - timedelta(days=self.fresh_within_days)).isoformat()

    def sql_params(self) -> dict[str, Any]:
        """The bound parameters of the SQL filter predicates (bm25_search in sql/sqlite/read.sql,
        filter_predicate in sql/tidb/search.sql): lists travel as JSON text, booleans as 0/1."""
        return {
            "sources": _json_list(self.sources),
            "domains": _json_list(self.domains),
            "include_user_codebase": int(self.include_user_codebase),
            "user_codebase": USER_CODEBASE,
            "target": self.ios_version_int,
            "include_deprecated": int(self.include_deprecated),
            "frameworks": _json_list(self.frameworks_any),
            "cutoff": self.freshness_cutoff(),
        }

    def admits(self, row: dict[str, Any]) -> bool:
        """Reference semantics, row by row. Stores implement the same rule in bulk (numpy, SQL);
        the contract tests compare them with this."""
        source = row.get("source")
        if self.sources is not None and source not in self.sources:
            return False
        passes_as_user_code = self.include_user_codebase and source == USER_CODEBASE
        in_domain = self.domains is None or row.get("domain") in self.domains
        if not (in_domain or passes_as_user_code):
            return False
        if not self.include_user_codebase and source == USER_CODEBASE:
            return False
        target = self.ios_version_int
        if target is not None:
            lo, hi = row.get("ios_version_min_int"), row.get("ios_version_max_int")
            if lo is not None and lo > target:
                return False
            if hi is not None and hi < target:
                return False
            if not self.include_deprecated and row.get("deprecated"):
                dep = row.get("deprecated_in_int")
                if dep is None or dep <= target:
                    return False
        if self.frameworks_any is not None and not set(self.frameworks_any) & set(
            row.get("framework_tags") or []
        ):
            return False
        cutoff = self.freshness_cutoff()
        if cutoff is not None:
            verified = row.get("last_verified")
            if verified is not None and str(verified)[:10] < cutoff:
                return False
        return True


def _json_list(values: tuple[str | None, ...] | None) -> str | None:
    return None if values is None else json.dumps(list(values))
