"""What a published document adds to its pieces: a talk's start times (and the URL that
plays it from there), and a page's links, each placed on the piece that names its target."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

from chunkers.code.references import Reference
from chunkers.model import Document, Piece

LINK_ROLE = "link"
# The references table's name and qualifier columns (sql/tidb/migrations/0004_references.sql).
MAX_TARGET_CHARS = 512


def timed(doc: Document, piece: Piece) -> Piece:
    """The piece with the second its first line starts at (`start_time`) and, when the talk
    has a URL, that URL deep-linked to it (`?time=312`, as Apple's video pages take it)."""
    times = doc.line_times or []
    line = piece.start_line or 1
    if not 1 <= line <= len(times):
        return piece
    start = times[line - 1]
    metadata = {**piece.metadata, "start_time": round(start, 3)}
    if doc.url:
        metadata["url"] = with_time(doc.url, int(start))
    return replace(piece, metadata=metadata)


def with_time(url: str, seconds: int) -> str:
    parts = urlsplit(url)
    query = "&".join(q for q in (parts.query, urlencode({"time": seconds})) if q)
    return urlunsplit(parts._replace(query=query))


def place_links(links: Sequence[Any], pieces: Sequence[Piece]) -> None:
    """Each link (PageLink) becomes a `link` reference of the first piece whose text names
    its target's title, else of the first piece: the chunk a reader would follow it from.
    The reference's name is the target's URL, its qualifier the title, its kind how the
    page relates to it (parent, topic, see_also, relationship, mention)."""
    if not pieces:
        return
    for link in links:
        if len(link.target) > MAX_TARGET_CHARS or len(link.title) > MAX_TARGET_CHARS:
            continue  # the page's text still names it; the index's name column cannot
        holder = next((p for p in pieces if link.title and link.title in p.content), pieces[0])
        line = holder.start_line or 1
        holder.references.append(
            Reference(
                name=link.target,
                role=LINK_ROLE,
                line=line,
                end_line=holder.end_line or line,
                kind=link.relation,
                qualifier=link.title,
            )
        )
