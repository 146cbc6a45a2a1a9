"""Availability of Objective-C and C declarations, read from Apple's SDK macros, into the
same `Availability` that Swift's `@available` gives (chunkers.tagging.availability).

Read:

* `API_AVAILABLE(ios(13.0), macos(10.15))`: minimum per platform.
* `API_DEPRECATED("message", ios(9.0, 16.0))` and `API_DEPRECATED_WITH_REPLACEMENT`:
  introduced and deprecated per platform.
* `API_UNAVAILABLE(ios, tvos)`: unavailable there.
* `NS_AVAILABLE_IOS(8_0)`, `NS_AVAILABLE(10_10, 8_0)` (macOS, then iOS),
  `NS_DEPRECATED_IOS(2_0, 9_0)`, `NS_DEPRECATED(10_0, 10_10, 2_0, 9_0)`, with `_` for `.`.
* `__IOS_AVAILABLE(13.0)`, `__OSX_AVAILABLE(10.15)`, `__TVOS_AVAILABLE`,
  `__WATCHOS_AVAILABLE`, `__IOS_DEPRECATED(2.0, 9.0)`, and the `__API_*` spellings of the
  `API_*` macros.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from chunkers.tagging.availability import UNAVAILABLE, Availability, platform_key

_MACRO = re.compile(
    r"\b(?P<name>(?:__)?API_(?:AVAILABLE|DEPRECATED(?:_WITH_REPLACEMENT)?|UNAVAILABLE)"
    r"|NS_(?:AVAILABLE|DEPRECATED)(?:_IOS|_MAC)?"
    r"|__(?:IOS|OSX|TVOS|WATCHOS)_(?:AVAILABLE|DEPRECATED))\s*\("
)
_PLATFORM_ARGUMENT = re.compile(r"(?P<platform>\w+)\s*(?:\((?P<versions>[^()]*)\))?")
_LEGACY_PLATFORM = {
    "IOS": "ios",
    "MAC": "macos",
    "OSX": "macos",
    "TVOS": "tvos",
    "WATCHOS": "watchos",
}
_MAX_MACRO_CHARS = 400


def availability_macros(text: str) -> list[str]:
    """Every availability macro call in `text` (a declaration's header), as written."""
    # Every macro's name holds one of these; most headers hold neither, and a plain substring
    # search is far cheaper than the pattern's alternatives at every word boundary.
    if "AVAILABLE" not in text and "DEPRECATED" not in text:
        return []
    found = []
    for match in _MACRO.finditer(text):
        close = _closing(text, match.end())
        if close is not None:
            found.append(" ".join(text[match.start() : close + 1].split()))
    return found


def macro_availability(attributes: Iterable[str]) -> Availability:
    """What the availability macros among `attributes` say; the first statement wins."""
    result = Availability()
    for attribute in attributes:
        if not isinstance(attribute, str):
            continue
        for match in _MACRO.finditer(attribute):
            close = _closing(attribute, match.end())
            if close is not None:
                _apply(result, match["name"], attribute[match.end() : close])
    return result


def _closing(text: str, start: int) -> int | None:
    depth, end = 1, min(len(text), start + _MAX_MACRO_CHARS)
    in_string = False
    for i in range(start, end):
        char = text[i]
        if char == '"' and text[i - 1] != "\\":
            in_string = not in_string
        elif not in_string and char == "(":
            depth += 1
        elif not in_string and char == ")":
            depth -= 1
            if depth == 0:
                return i
    return None


def _apply(result: Availability, name: str, arguments: str) -> None:
    name = name.removeprefix("__")
    if name.startswith("API_"):
        _apply_api(result, name, re.sub(r'"(?:\\.|[^"\\])*"', "", arguments))
        return
    versions = [v.strip().replace("_", ".") for v in arguments.split(",") if v.strip()]
    if name.startswith("NS_"):
        suffix = name.rsplit("_", 1)[-1]
        platform = _LEGACY_PLATFORM.get(suffix)
        if platform is None:  # NS_AVAILABLE(mac, ios) / NS_DEPRECATED(mac, mac, ios, ios)
            half = len(versions) // 2
            _note_pair(result, "macos", versions[:half], deprecated="DEPRECATED" in name)
            _note_pair(result, "ios", versions[half:], deprecated="DEPRECATED" in name)
            return
    else:
        platform = _LEGACY_PLATFORM.get(name.split("_")[0])
    if platform is not None:
        _note_pair(result, platform, versions, deprecated="DEPRECATED" in name)


def _note_pair(
    result: Availability, platform: str, versions: list[str], *, deprecated: bool
) -> None:
    if versions:
        result.note(platform, "min", versions[0])
    if deprecated and len(versions) > 1:
        result.note(platform, "deprecated_in", versions[1])


def _apply_api(result: Availability, name: str, arguments: str) -> None:
    for match in _PLATFORM_ARGUMENT.finditer(arguments):
        platform = platform_key(match["platform"])
        if platform is None:
            continue
        if name == "API_UNAVAILABLE":
            result.note(platform, UNAVAILABLE, "true")
            continue
        versions = [v.strip() for v in (match["versions"] or "").split(",") if v.strip()]
        _note_pair(result, platform, versions, deprecated=name.startswith("API_DEPRECATED"))
