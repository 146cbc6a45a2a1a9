"""What a reader of a published format makes of one file: the text the chunkers cut, in the
form they already read (Markdown for pages, one cue per line for a talk), and the facts the
file itself states (title, URL, availability, frameworks, links), so that tagging, filters,
links and packing treat Apple's pages like any other document.

Readers never guess a fact the file does not state: an absent availability stays absent,
and the chunk tagging that reads prose fills in only what the page's text says.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


class FormatError(ValueError):
    """A file that claims a published format (by its name or its content) but breaks it: a
    truncated render JSON page, a metadata comment that is not JSON, a broken cue. Reading
    turns it into a reject naming the file, the line and the reason."""

    def __init__(self, reason: str, line: int | None = None, field: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.line = line
        self.field = field


@dataclass(frozen=True)
class PageLink:
    """A page's reference to another page, by the key the target is indexed under: its URL
    (`page_url`), exactly as the target's own document states it."""

    target: str
    title: str
    relation: str  # "parent", "topic", "see_also", "relationship", "mention"


@dataclass
class Published:
    """One document read from a published format."""

    text: str
    language: str  # "markdown" (pages and guides) or "text" (talks)
    source: str  # "apple_docs", "package_docs" or "wwdc"
    format: str  # which reader: "docc_json", "apple_markdown", "scraped_apple", ...
    title: str | None = None
    url: str | None = None
    # Known fields (chunkers.model.KNOWN_FIELDS): "platforms" ({platform: {"min", "max",
    # "deprecated_in", "unavailable"}}), "frameworks", "deprecated", "deprecated_in", ...
    fields: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)  # symbol kind, role, session, ...
    links: list[PageLink] = field(default_factory=list)
    # Talks: the second each line of `text` starts at (line n at index n - 1), so that every
    # chunk knows its start time and its URL can deep-link to it.
    line_times: list[float] | None = None


@dataclass(frozen=True)
class NotADocument:
    """A file of a published format that is not a document of its own: an HLS segment (its
    playlist is the session), a session list beside the subtitles (a sidecar), an archive's
    navigator index. Counted in the run summary under `label`, never rejected."""

    label: str
