"""Apple's pages as Markdown without metadata: pages saved from developer.apple.com (the most
common form in the wild) and the guides Xcode ships for its coding assistant.

A saved page is recognised by what Apple's page layout always states, whatever tool saved
it: the run-together availability badges (`iOS 17.0+iPadOS 17.0+…Swift 5.9+`, `iOS
16.1–17.0Deprecated`) near the top, under a `# ` title, usually after a breadcrumb list
(`- Swift Charts` / `- AnnotationContext`). From it: the title from the `# ` heading, the
framework from the breadcrumb's first entry (named as the page names it, lexicon or not:
Observation, Core Transferable), deprecation from the badges or a lone `Deprecated` badge line
above the first section; empty code blocks (example code the saver lost) are dropped, and
HTML entities left in declarations are decoded. The availability itself is read by tagging,
which reads these badge lines in any prose (chunkers.tagging.availability).

Xcode's guides (`…/IDEIntelligenceChat.framework/…/AdditionalDocumentation/*.md`) are
recognised by their folder; their framework is the one their file name starts with
(`SwiftUI-New-Toolbar-Features.md`).
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

from chunkers.sources.published.model import Published
from core.frameworks import canonical_framework

_HEAD_LINES = 60
_BADGE = (
    r"(?:iPadOS|iOS|macOS|Mac Catalyst|tvOS|visionOS|watchOS|Xcode|Swift|DriverKit)"
    r" \d+(?:\.\d+)*(?:\+|[–-]\d+(?:\.\d+)*)(?:Deprecated|Beta)?"
)
# The line may open with the framework's and language's names run into the first badge
# (`ActivityKitSwiftiOS 13.0+…`).
_BADGE_LINE = re.compile(rf"^[ \t]*[A-Za-z ]*?(?:{_BADGE}[ \t]*)+$", re.MULTILINE)
# The role line between the breadcrumb and the title: "Instance Method", "API Collection".
_ROLE_LINE = re.compile(r"\n[ \t]*[A-Z][A-Za-z]*(?: [A-Z][A-Za-z]*){0,3}[ \t]*\n\s*\Z")
_BADGE_ONE = re.compile(_BADGE)
_TITLE = re.compile(r"^# +(.+?)\s*#*\s*$", re.MULTILINE)
_BREADCRUMB = re.compile(r"^[ \t]*-(?:[ \t]+(.*?))?[ \t]*$")
_DEPRECATED_BADGE = re.compile(r"^[ \t]*Deprecated[ \t]*$", re.MULTILINE)
_FIRST_SECTION = re.compile(r"^## ", re.MULTILINE)
_EMPTY_FENCE = re.compile(r"^[ \t]*(```|~~~)[^\n`]*\n(?:[ \t]*\n)*[ \t]*\1[ \t]*$\n?", re.MULTILINE)
_FENCED = re.compile(r"^([ \t]*)(```|~~~)([^\n`]*)\n(.*?)^\1\2[ \t]*$", re.MULTILINE | re.DOTALL)
_GUIDE_FOLDER = re.compile(r"additionaldoc", re.IGNORECASE)
_NOT_WORD = re.compile(r"[^A-Za-z0-9]")


def is_saved_apple_page(text: str) -> bool:
    """A page saved from developer.apple.com: a `# ` title in its head and, after it, a line
    of availability badges (two run together, or one under a breadcrumb list)."""
    head = "\n".join(text.splitlines()[:_HEAD_LINES])
    title = _TITLE.search(head)
    if title is None:
        return False
    before = head[: title.start()]
    badges = _BADGE_LINE.search(head, title.end())
    if badges is not None and len(_BADGE_ONE.findall(badges.group())) >= 2:
        return True
    # One badge, or none (an API collection): the breadcrumb and role line say it.
    crumbs = _breadcrumb(_ROLE_LINE.sub("\n", before))
    return len(crumbs) >= 2 and (badges is not None or bool(_ROLE_LINE.search(before)))


def read_saved_apple_page(text: str) -> Published:
    head = "\n".join(text.splitlines()[:_HEAD_LINES])
    title_match = _TITLE.search(head)
    title = title_match.group(1).strip() if title_match else None
    crumbs = _breadcrumb(_ROLE_LINE.sub("\n", head[: title_match.start()] if title_match else ""))
    fields: dict[str, Any] = {}
    if crumbs:
        fields["frameworks"] = [canonical_framework(crumbs[0]) or crumbs[0]]
    first_section = _FIRST_SECTION.search(text)
    top = text[: first_section.start() if first_section else len(text)]
    if _DEPRECATED_BADGE.search(top) or (crumbs and crumbs[-1].endswith(" Deprecated")):
        fields["deprecated"] = True
    metadata: dict[str, Any] = {"breadcrumb": " › ".join(_strip_badge(c) for c in crumbs)}
    if title_match:
        # The breadcrumb and role line are the context and metadata, not text to find: kept
        # as blank lines so that line numbers stay the file's.
        cut = title_match.start()
        text = "\n" * text[:cut].count("\n") + text[cut:]
    return Published(
        text=_cleaned(text),
        language="markdown",
        source="apple_docs",
        format="saved_apple_page",
        title=title,
        fields=fields,
        metadata=metadata if crumbs else {},
    )


def is_xcode_guide(path: Path, root: Path) -> bool:
    """A Markdown guide in Xcode's AdditionalDocumentation folder (or a copy of that folder
    kept under a name that says so)."""
    try:
        parts = path.resolve().relative_to(root.resolve().parent).parts[:-1]
    except ValueError:
        parts = path.parts[:-1]
    return path.suffix.lower() == ".md" and any(
        _GUIDE_FOLDER.search(_NOT_WORD.sub("", p)) for p in parts
    )


def read_xcode_guide(path: Path, text: str) -> Published:
    title = _TITLE.search(text)
    framework = guide_framework(path.stem)
    return Published(
        text=text,
        language="markdown",
        source="apple_docs",
        format="xcode_guide",
        title=title.group(1).strip() if title else path.stem.replace("-", " "),
        fields={"frameworks": [framework]} if framework else {},
        metadata={"guide": path.name},
    )


def guide_framework(stem: str) -> str | None:
    """The framework a guide's file name starts with: the longest leading run of its
    dash-separated words that the lexicon knows (`Swift-Charts-3D-Visualization` →
    Charts, `AppKit-Implementing-…` → AppKit); None when it starts with no framework."""
    words = stem.split("-")
    for n in range(min(4, len(words)), 0, -1):
        found = canonical_framework(" ".join(words[:n])) or canonical_framework("".join(words[:n]))
        if found:
            return found
    return None


def _breadcrumb(head: str) -> list[str]:
    """The list items that open a page, when the page opens with a list and nothing else."""
    crumbs = []
    for line in head.splitlines():
        if not line.strip():
            continue
        m = _BREADCRUMB.match(line)
        if not m:
            return []
        if m.group(1):  # a saver may leave an empty or nested item in the trail
            crumbs.append(m.group(1))
    return crumbs


def _strip_badge(crumb: str) -> str:
    return crumb.removesuffix(" Deprecated").removesuffix(" Beta").strip()


def _cleaned(text: str) -> str:
    """Empty code blocks dropped (keeping line numbers: each becomes blank lines), entities
    decoded inside code (declarations saved with `&lt;` and `&amp;`)."""

    def blank(m: re.Match[str]) -> str:
        return "\n" * m.group().count("\n")

    def decode(m: re.Match[str]) -> str:
        indent, fence, info, body = m.groups()
        return f"{indent}{fence}{info}\n{html.unescape(body)}{indent}{fence}"

    return _FENCED.sub(decode, _EMPTY_FENCE.sub(blank, text))
