"""Which published format a file is, by its name and its content, and its reader.

A `.json` file that parses to a page with a `doc://` identifier and metadata is a DocC render
JSON page wherever it lies; a Markdown file that opens with swift-docc's metadata comment is
Apple's Markdown export; Markdown in Xcode's guides folder is a guide; Markdown with Apple's
availability badges under its title is a page saved from Apple's site; WebVTT subtitles, HLS
subtitle playlists and timed JSON transcripts are talks (chunkers.sources.published.wwdc).
Anything else is None: read as the plain file it is.
"""

from __future__ import annotations

import json
from pathlib import Path

from chunkers.sources.published.apple_markdown import is_apple_markdown, read_apple_markdown
from chunkers.sources.published.apple_prose import (
    is_saved_apple_page,
    is_xcode_guide,
    read_saved_apple_page,
    read_xcode_guide,
)
from chunkers.sources.published.docc_render import (
    is_docc_page,
    may_be_docc_page,
    read_docc_page,
    read_docc_text,
)
from chunkers.sources.published.model import NotADocument, Published
from chunkers.sources.published.wwdc import read_session

TALK_KINDS = frozenset({"webvtt", "hls"})


def read_published(
    path: Path, root: Path, text: str, kind: str, *, base_url: str | None = None
) -> Published | NotADocument | None:
    """The file as a published document, a file that is part of one (NotADocument), or None.
    Raises FormatError for a file that claims a format and breaks it."""
    if kind in TALK_KINDS:
        return read_session(path, text, kind)
    if kind == "json":
        try:
            value = json.loads(text)
        except (json.JSONDecodeError, RecursionError):
            if may_be_docc_page(text):
                return read_docc_text(text, base_url=base_url)  # raises with the reason
            return None
        if is_docc_page(value):
            return read_docc_page(value, base_url=base_url)
        return read_session(path, text, kind)
    if kind == "markdown" and path.suffix.lower() == ".md":
        if is_apple_markdown(text):
            return read_apple_markdown(text)
        if is_xcode_guide(path, root):
            return read_xcode_guide(path, text)
        if is_saved_apple_page(text):
            return read_saved_apple_page(text)
    return None
