"""Platform availability and Swift language versions, read from text and `@available` attributes.

What is read:

* Prose availability: `iOS 17.0+`, `Mac Catalyst 13.1+`, `Available in iOS 26.0 and later`,
  `Introduced in iOS 14`, `Deprecated in iOS 16.0`, and ranges `iOS 13.0–16.0` (min and max;
  a trailing `Deprecated` also makes the upper bound the deprecation version, written with a
  space or, in the badges of Apple's pages, run together: `iOS 16.1–17.0Deprecated`). When a text
  names the same platform and bound twice, the first mention wins: a page's availability
  header comes before any later comparison with other releases.
* `Deprecated in iOS 16.0` counts only when it starts a line (after markup or `///`), as
  API references write it. "NavigationView was deprecated in iOS 16" in running prose is
  about some API the text discusses; tagging the text deprecated would hide migration
  guides from exactly the readers who need them.
* `@available(...)` in both its short (`iOS 17.0, macOS 14.0, *` / `swift 5.9`) and long
  (`iOS, introduced: 15.0, deprecated: 17.0, obsoleted: 18.0, message: "..."`) forms.
* Swift Evolution status lines: `* Status: **Implemented (Swift 5.9)**`.

Rules worth knowing:

* `obsoleted: V` is stored as `obsoleted` and also as `max` when nothing else set a max. The
  declaration is gone *at* V, so as a max it is one release too generous at exactly V (the
  index treats max as inclusive); we accept that rather than guess the release before V.
* `unavailable` on a platform is recorded as `"unavailable": "true"` in that platform's entry.
  `@available(*, unavailable)` (a stub kept for migration) and `@available(*, deprecated)`
  mark the declaration deprecated without a version, so default searches skip it.
* `*ApplicationExtension` platforms are ignored: they restrict app extensions, not the API.
* Versions are normalised (`17` → `17.0`); anything that does not parse is ignored.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from core.versions import VersionError, normalize_version

# Keys of the platform map, in the order "the first platform" refers to.
PLATFORMS = ("ios", "ipados", "macos", "watchos", "tvos", "visionos", "maccatalyst")
BOUNDS = ("min", "max", "deprecated_in", "obsoleted")
UNAVAILABLE = "unavailable"

_PLATFORM_NAMES = {
    "ios": "ios",
    "ipados": "ipados",
    "macos": "macos",
    "osx": "macos",
    "macosx": "macos",
    "maccatalyst": "maccatalyst",
    "tvos": "tvos",
    "watchos": "watchos",
    "visionos": "visionos",
    "xros": "visionos",
}


def platform_key(name: str) -> str | None:
    """'iOS' → 'ios', 'Mac Catalyst' → 'maccatalyst'; None for anything else."""
    return _PLATFORM_NAMES.get(re.sub(r"\s+", "", name).lower())


_VERSION_PREFIX = re.compile(r"^[A-Za-z][A-Za-z ]*\s+")


def clean_version(value: object) -> str | None:
    """A normalised version from a field or a match, or None when it is not one.

    Tolerates what hand-written metadata contains: numbers, `"Swift 5.9"`, `"iOS 17+"`.
    A float such as 5.10 has already lost its trailing zero; nothing can bring it back.
    """
    if value is None or isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return None
    text = _VERSION_PREFIX.sub("", str(value).strip()).rstrip("+ ")
    try:
        return normalize_version(text)
    except VersionError:
        return None


@dataclass
class Availability:
    """What one source (a text, an attribute list, a set of fields) says. Sparse: only the
    bounds it states are present."""

    platforms: dict[str, dict[str, str]] = field(default_factory=dict)
    deprecated: bool = False  # deprecated with no version, or everywhere
    swift_version: str | None = None

    def note(self, platform: str, bound: str, value: object) -> None:
        """Record a bound unless this source already stated it (first statement wins)."""
        version = str(value) if bound == UNAVAILABLE else clean_version(value)
        if version is not None:
            self.platforms.setdefault(platform, {}).setdefault(bound, version)

    def note_swift(self, value: object) -> None:
        if self.swift_version is None:
            self.swift_version = clean_version(value)

    def overlaid_by(self, top: Availability) -> Availability:
        """Self with every bound that `top` states replaced by top's."""
        platforms = {p: dict(b) for p, b in self.platforms.items()}
        for platform, bounds in top.platforms.items():
            platforms.setdefault(platform, {}).update(bounds)
        return Availability(
            platforms,
            deprecated=self.deprecated or top.deprecated,
            swift_version=top.swift_version or self.swift_version,
        )


# --- prose -------------------------------------------------------------------------------

_PLATFORM = (
    r"(?P<platform>iPadOS|iOS|macOS|Mac\s+Catalyst|macCatalyst|tvOS|watchOS|visionOS|OS\s+X)"
)
# Up to three components, and not the head of a longer dotted number.
_VERSION = r"\d{1,4}(?:\.\d{1,2}){0,2}(?!\.?\d)"
# Cheap test that a text can hold availability at all: most prose never names a platform.
_MAY_HOLD = re.compile(r"[Oo][Ss]\s+(?:X\s+)?\d|[Cc]atalyst\s+\d")
# Every "<platform> <version>"; what surrounds it decides which bound it is.
# Apple's pages run their badges together (`iOS 16.1–17.0DeprecatediPadOS 16.1–17.0…`):
# a platform may follow a badge's "Deprecated" or "Beta" with no space or word boundary.
# and a badge line may start glued to the framework's and language's names (`SwiftiOS 13.0+`),
# a lowercase platform name right after a lowercase letter.
_MENTION = re.compile(
    r"(?:\b|(?<=Deprecated)|(?<=Beta)|(?<=(?-i:[a-z]))(?=(?-i:i|mac|tv|watch|vision)))"
    rf"{_PLATFORM}\s+(?P<v>{_VERSION})",
    re.IGNORECASE,
)
_AFTER = re.compile(
    rf"(?P<plus>\s*\+)|,?\s+(?:and|or)\s+(?P<later>later)\b"
    rf"|\s*[-–—]\s*(?P<hi>{_VERSION})(?P<open>\s*\+)?"
    rf"(?P<dep>\s+deprecated\b|\s*(?-i:Deprecated))?",
    re.IGNORECASE,
)
_INTRODUCED_BEFORE = re.compile(r"\bintroduced\s+in\s+$", re.IGNORECASE)
# Only a line's own statement, as API references (and doc comments) write it.
_DEPRECATED_BEFORE = re.compile(r"^[ \t>*_#|/•-]*deprecated\s+in\s+$", re.IGNORECASE | re.MULTILINE)
_LOOKBEHIND_CHARS = 40


def text_availability(text: str) -> Availability:
    """Availability stated in prose (or in comments). First mention per platform and bound.

    A bare "iOS 17" says nothing: only the forms listed in the module docstring count.
    """
    result = Availability()
    if not text or not _MAY_HOLD.search(text):
        return result
    for mention in _MENTION.finditer(text):
        platform = platform_key(mention["platform"])
        if platform is not None:
            for bound, version in _bounds_of(text, mention):
                result.note(platform, bound, version)
    return result


def _bounds_of(text: str, mention: re.Match[str]) -> list[tuple[str, str]]:
    version = mention["v"]
    window = (max(0, mention.start() - _LOOKBEHIND_CHARS), mention.start())
    if _INTRODUCED_BEFORE.search(text, *window):
        return [("min", version)]
    if _DEPRECATED_BEFORE.search(text, *window):
        return [("deprecated_in", version)]
    after = _AFTER.match(text, mention.end())
    if after is None:
        return []
    if after["plus"] or after["later"]:
        return [("min", version)]
    if after["open"]:
        return []  # "iOS 13–16+" is no range we know how to read
    bounds = [("min", version), ("max", after["hi"])]
    return bounds + [("deprecated_in", after["hi"])] if after["dep"] else bounds


# --- @available --------------------------------------------------------------------------

_AVAILABLE = re.compile(r"@available\s*\(")
_MAX_ATTRIBUTE_CHARS = 2000  # an unclosed "(" must not make us scan a whole file
_LONG_FORM_KEYS = frozenset(
    {"introduced", "deprecated", "obsoleted", "unavailable", "message", "renamed", "noasync"}
)


@dataclass(frozen=True)
class AttributeSpan:
    start: int
    end: int
    arguments: str


def available_spans(text: str) -> Iterator[AttributeSpan]:
    """Every `@available(...)` in text, with its argument text; unclosed ones are skipped."""
    for match in _AVAILABLE.finditer(text):
        close = _closing_paren(text, match.end())
        if close is not None:
            yield AttributeSpan(match.start(), close + 1, text[match.end() : close])


def _closing_paren(text: str, start: int) -> int | None:
    depth, i, end = 1, start, min(len(text), start + _MAX_ATTRIBUTE_CHARS)
    while i < end:
        char = text[i]
        if char == '"':
            i = _string_end(text, i, end)
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return None


def _string_end(text: str, quote: int, end: int) -> int:
    i = quote + 1
    while i < end and text[i] != '"':
        i += 2 if text[i] == "\\" else 1
    return i


def _split_arguments(arguments: str) -> list[str]:
    """Top-level commas only: messages may contain commas and parentheses."""
    parts, depth, current, i = [], 0, [], 0
    while i < len(arguments):
        char = arguments[i]
        if char == '"':
            end = _string_end(arguments, i, len(arguments))
            current.append(arguments[i : end + 1])
            i = end + 1
            continue
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append("".join(current).strip())
            current = []
        else:
            current.append(char)
        i += 1
    parts.append("".join(current).strip())
    return [p for p in parts if p]


def attribute_availability(attributes: Iterable[str]) -> Availability:
    """Combine every `@available` found in `attributes` (strings such as
    `@available(iOS 17.0, *)`); the first statement of a bound wins."""
    result = Availability()
    for attribute in attributes:
        if not isinstance(attribute, str):
            continue
        for span in available_spans(attribute):
            apply_available(result, span.arguments)
    return result


def apply_available(result: Availability, arguments: str) -> None:
    """Add what one `@available(arguments)` says to `result`."""
    args = _split_arguments(arguments)
    if not args:
        return
    second = args[1].split(":")[0].strip() if len(args) > 1 else ""
    if second in _LONG_FORM_KEYS:
        _apply_long_form(result, args[0], args[1:])
    else:
        _apply_short_form(result, args)


def _apply_short_form(result: Availability, args: list[str]) -> None:
    for arg in args:
        name, version = [*arg.split(None, 1), ""][:2]
        if name.lower() == "swift":
            result.note_swift(version)
        elif (platform := platform_key(name)) is not None:
            result.note(platform, "min", version)


def _apply_long_form(result: Availability, name: str, args: list[str]) -> None:
    everywhere = name == "*"
    platform = platform_key(name)
    if name.lower() == "swift":
        for key, value in _keyed(args):
            if key == "introduced":
                result.note_swift(value)
        return
    if not everywhere and platform is None:
        return  # unknown platform, or an app-extension restriction
    for key, value in _keyed(args):
        if key == "deprecated" or (key == "unavailable" and everywhere):
            if platform is None or not value:
                result.deprecated = True
            if platform is not None and value:
                result.note(platform, "deprecated_in", value)
        elif platform is None:
            continue
        elif key == "introduced":
            result.note(platform, "min", value)
        elif key == "obsoleted":
            result.note(platform, "obsoleted", value)
        elif key == "unavailable":
            result.note(platform, UNAVAILABLE, "true")


def _keyed(args: list[str]) -> Iterator[tuple[str, str]]:
    for arg in args:
        key, _, value = arg.partition(":")
        yield key.strip(), value.strip()


# --- which attributes belong to a piece ---------------------------------------------------

# Strings and comments, blanked before counting braces so that "{" in them does not nest.
_NOT_CODE = re.compile(r'"(?:\\.|[^"\\\n])*"|//[^\n]*|/\*.*?\*/', re.DOTALL)
# What may sit between attributes of one declaration.
_BETWEEN_ATTRIBUTES = re.compile(r"(?:\s+|@\w+(?:\([^()]*\))?|//[^\n]*)*")


def leading_available_group(text: str) -> list[str]:
    """The `@available` attributes of the first declaration at the piece's top level.

    A piece can hold several declarations (a window over a file, or members of a type split
    across pieces). The piece is tagged with the first top-level declaration's attributes;
    attributes nested inside a body (depth > 0) describe members, not the piece.
    """
    if "@available" not in text:
        return []
    blanked = _NOT_CODE.sub(lambda m: " " * len(m.group()), text)
    depths = _brace_depths(blanked)
    group: list[AttributeSpan] = []
    for span in available_spans(text):
        if blanked[span.start] != "@" or depths[span.start] != 0:
            continue  # commented out, inside a string, or on a nested member
        if group and not _BETWEEN_ATTRIBUTES.fullmatch(text, group[-1].end, span.start):
            break
        group.append(span)
    return [text[s.start : s.end] for s in group]


def _brace_depths(code: str) -> list[int]:
    """Depth at each offset, never below zero: a piece may start inside a type's body."""
    depths, depth = [], 0
    for char in code:
        depths.append(depth)
        if char == "{":
            depth += 1
        elif char == "}":
            depth = max(0, depth - 1)
    return depths


# --- Swift Evolution ------------------------------------------------------------------------

_STATUS_LINE = re.compile(r"^[ \t]*(?:[*-][ \t]*)?Status:(?P<status>.*)$", re.MULTILINE)
# "Implemented (Swift 5.9)", "Implemented (6.2)", "Implemented with Modifications (Swift 5.1)",
# "Partially implemented (Swift 5.2):". The version must fill the parentheses: "(Swift Next)"
# and "(Swift 5.3 supports platform conditionals, ...)" state no release to tag.
_IMPLEMENTED = re.compile(
    r"\bimplemented\b[^()\n]*\(\s*(?:swift\s+)?(?P<v>\d+(?:\.\d+){0,2})\s*\)", re.IGNORECASE
)


def swift_evolution_version(text: str) -> str | None:
    """The Swift release a proposal was implemented in, from its first Status line."""
    status = _STATUS_LINE.search(text or "")
    if status is None:
        return None
    implemented = _IMPLEMENTED.search(status["status"])
    return clean_version(implemented["v"]) if implemented else None
