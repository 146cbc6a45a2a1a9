"""Version strings and their sortable integer encoding.

Versions compared as text put "9.0" after "17.0" and "5.9" after "5.10"; every comparison
in the project goes through `version_int`.
"""

from __future__ import annotations

import re

_VERSION = re.compile(r"^\s*v?(\d{1,4})(?:\.(\d{1,2}))?(?:\.(\d{1,2}))?\s*$")


class VersionError(ValueError):
    """A version string that is not MAJOR[.MINOR[.PATCH]]."""


def parse_version(text: str) -> tuple[int, int, int]:
    match = _VERSION.match(str(text))
    if not match:
        raise VersionError(f"not a version: {text!r} (expected e.g. 17, 17.0 or 17.0.1)")
    major, minor, patch = (int(g) if g else 0 for g in match.groups())
    if minor > 99 or patch > 99:
        raise VersionError(f"not a version: {text!r} (minor and patch must be below 100)")
    return major, minor, patch


def version_int(text: str | None) -> int | None:
    """major*10000 + minor*100 + patch, or None for None/empty."""
    if text is None or str(text).strip() == "":
        return None
    major, minor, patch = parse_version(str(text))
    return major * 10000 + minor * 100 + patch


def normalize_version(text: str) -> str:
    """'17' -> '17.0', '17.0.0' -> '17.0', '17.2.1' stays."""
    major, minor, patch = parse_version(text)
    return f"{major}.{minor}.{patch}" if patch else f"{major}.{minor}"


def is_version(text: str) -> bool:
    try:
        parse_version(text)
    except VersionError:
        return False
    return True
