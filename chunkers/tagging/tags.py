"""Tags on chunks: platform version ranges, deprecation, Swift version, frameworks, chunk type.

Where tags come from, weakest first:

1. the document's text: availability lines (prose only: in code they describe one
   declaration, not the file), Swift Evolution status lines, framework mentions and imports;
2. the document's fields (`ios_version`, `ios_version_min/max`, `macos_version_min`, ...,
   `swift_version`, `frameworks`, `deprecated`, `deprecated_in`), which override its text;
3. the piece: availability text in its content, then its `@available` attributes (the
   piece's own list if it has any, else the first top-level attribute group in its
   content, see `availability.leading_available_group`; never for a part of a declaration
   split at its members, whose content opens with a member's attributes).

`merge_tags` lets the piece override the document bound by bound and platform by platform,
is deprecated if either is, and unions frameworks. Versions are normalised strings; compare
them with `index.versions.version_int`, never as text.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from chunkers.model import CODE_LANGUAGES, NON_APPLE_LANGUAGES
from chunkers.tagging.availability import (
    BOUNDS,
    PLATFORMS,
    UNAVAILABLE,
    Availability,
    attribute_availability,
    clean_version,
    leading_available_group,
    swift_evolution_version,
    text_availability,
)
from chunkers.tagging.objc_availability import macro_availability
from core.frameworks import (
    framework_field,
    framework_mentions,
    import_frameworks,
    imported_frameworks,
)

__all__ = [
    "Tags",
    "chunk_type_for",
    "document_tags",
    "framework_mentions",
    "merge_tags",
    "piece_tags",
]

USER_CODEBASE = "user_codebase"

PlatformMap = dict[str, dict[str, str | None]]


@dataclass
class Tags:
    # {"ios": {"min": "17.0", "max": None, "deprecated_in": "18.0", "obsoleted": None}, ...};
    # only platforms something was said about; "unavailable": "true" where unavailable.
    platforms: PlatformMap = field(default_factory=dict)
    deprecated: bool = False  # on any platform, or unconditionally
    deprecated_in: str | None = None  # iOS's deprecation version, else the first platform's
    swift_version: str | None = None
    frameworks: list[str] = field(default_factory=list)  # canonical, sorted, unique


# --- documents ------------------------------------------------------------------------------


def document_tags(fields: Mapping, text: str, *, language: str, source: str) -> Tags:
    """Tags of a whole document from its fields and text. `source` is accepted so callers
    need not know that every source is tagged by the same rules today."""
    fields = fields if isinstance(fields, Mapping) else {}
    text = text if isinstance(text, str) else ""
    is_code = language in CODE_LANGUAGES
    from_text = Availability() if is_code else text_availability(text)
    if not is_code:
        from_text.note_swift(swift_evolution_version(text))
    found = from_text.overlaid_by(_field_availability(fields))
    explicit = fields.get("deprecated")
    frameworks = {*framework_field(fields.get("frameworks")), *framework_mentions(text)}
    if language == "swift":  # mentions skip `import os`, which only Swift makes unambiguous
        frameworks.update(imported_frameworks(text, swift=True))
    return _tags(
        found,
        frameworks,
        deprecated_in=clean_version(fields.get("deprecated_in")),
        deprecated=_as_bool(explicit),
    )


def _field_availability(fields: Mapping) -> Availability:
    result = Availability()
    stated = fields.get("platforms")
    # A published page's availability, per platform (chunkers.sources.published): bounds
    # and "unavailable" as the platform map holds them.
    for platform, bounds in stated.items() if isinstance(stated, Mapping) else ():
        if platform in PLATFORMS and isinstance(bounds, Mapping):
            for bound in (*BOUNDS, UNAVAILABLE):
                if bounds.get(bound) is not None:
                    result.note(platform, bound, bounds[bound])
    for platform in PLATFORMS:
        result.note(platform, "min", fields.get(f"{platform}_version_min"))
        # A bare `ios_version` names the release the document was written for: its minimum.
        result.note(platform, "min", fields.get(f"{platform}_version"))
        result.note(platform, "max", fields.get(f"{platform}_version_max"))
    result.note_swift(fields.get("swift_version"))
    return result


def _as_bool(value: object) -> bool | None:
    """A deprecated flag from JSON or front matter; None when absent or unreadable."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in {"true", "yes", "1"}:
        return True
    if isinstance(value, str) and value.strip().lower() in {"false", "no", "0"}:
        return False
    return None


# --- pieces ---------------------------------------------------------------------------------


def piece_tags(
    content: str,
    *,
    language: str,
    imports: list[str],
    attributes: list[str],
    member_part: bool = False,
) -> Tags:
    """Tags of one chunk from its own content, imports and attributes. A `member_part` (a
    part of a declaration split at its members) has the declaration's attributes, and those
    leading its content are a member's: it never takes them as its own."""
    content = content if isinstance(content, str) else ""
    own = [a for a in attributes or [] if isinstance(a, str) and "@available" in a]
    declared = attribute_availability(
        own or ([] if member_part else leading_available_group(content))
    )
    # Objective-C's SDK macros (API_AVAILABLE(ios(13.0)), ...) say what @available says.
    declared = declared.overlaid_by(macro_availability(attributes or []))
    found = text_availability(content).overlaid_by(declared)
    swift = language == "swift"
    frameworks: set[str] = set(framework_mentions(content))
    if language not in NON_APPLE_LANGUAGES:  # their imports never name Apple frameworks
        frameworks.update(import_frameworks(imports or [], swift=swift))
    if swift:  # mentions skip `import os`, which only Swift makes unambiguous
        frameworks.update(imported_frameworks(content, swift=True))
    return _tags(found, frameworks)


# --- combining ------------------------------------------------------------------------------


def merge_tags(document: Tags, piece: Tags) -> Tags:
    """The piece's values override the document's, bound by bound per platform."""
    platforms: PlatformMap = {}
    for name in _ordered(document.platforms.keys() | piece.platforms.keys()):
        base = dict(document.platforms.get(name, {}))
        base.update({k: v for k, v in piece.platforms.get(name, {}).items() if v is not None})
        platforms[name] = base
    ios_deprecation = platforms.get("ios", {}).get("deprecated_in")
    return Tags(
        platforms=platforms,
        deprecated=document.deprecated or piece.deprecated,
        deprecated_in=ios_deprecation or piece.deprecated_in or document.deprecated_in,
        swift_version=piece.swift_version or document.swift_version,
        frameworks=sorted(set(document.frameworks) | set(piece.frameworks)),
    )


def _tags(
    found: Availability,
    frameworks: Iterable[str],
    *,
    deprecated_in: str | None = None,
    deprecated: bool | None = None,
) -> Tags:
    platforms = {name: _full_bounds(found.platforms[name]) for name in _ordered(found.platforms)}
    deprecated_in = _primary_deprecation(platforms, fallback=deprecated_in)
    if deprecated is None:
        deprecated = found.deprecated or deprecated_in is not None
    return Tags(
        platforms=platforms,
        deprecated=deprecated,
        deprecated_in=deprecated_in,
        swift_version=found.swift_version,
        frameworks=sorted(set(frameworks)),
    )


def _full_bounds(stated: Mapping[str, str]) -> dict[str, str | None]:
    bounds: dict[str, str | None] = {bound: stated.get(bound) for bound in BOUNDS}
    # Obsoleted at V: V is the first release without it; see availability's docstring.
    if bounds["max"] is None and bounds["obsoleted"] is not None:
        bounds["max"] = bounds["obsoleted"]
    if UNAVAILABLE in stated:
        bounds[UNAVAILABLE] = stated[UNAVAILABLE]
    return bounds


def _primary_deprecation(platforms: PlatformMap, *, fallback: str | None) -> str | None:
    """iOS's deprecation, else an explicit unqualified one, else the first platform's."""
    ios = platforms.get("ios", {}).get("deprecated_in")
    if ios or fallback:
        return ios or fallback
    return next((b["deprecated_in"] for b in platforms.values() if b.get("deprecated_in")), None)


def _ordered(names: Iterable[str]) -> list[str]:
    return sorted(names, key=lambda n: PLATFORMS.index(n) if n in PLATFORMS else len(PLATFORMS))


# --- chunk types ----------------------------------------------------------------------------


def chunk_type_for(language: str, source: str, kind: str | None) -> str:
    """One of api_doc, code_declaration, user_code, concept, transcript, chat."""
    if language in CODE_LANGUAGES:
        return "user_code" if source == USER_CODEBASE else "code_declaration"
    if language == "chat" or source == "chat" or kind == "messages":
        return "chat"
    if source in ("apple_docs", "package_docs"):
        return "api_doc"
    if source == "wwdc" or (language == "text" and kind == "topic"):
        return "transcript"
    return "concept"
