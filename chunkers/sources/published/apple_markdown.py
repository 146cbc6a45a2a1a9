"""Apple's Markdown export (what `developer.apple.com/documentation/<path>.md` returns, written
by swift-docc's `MarkdownOutputNode`): an HTML comment holding JSON metadata, the page, and
a copyright line.

The metadata gives the title, framework, identifier (→ URL), role, symbol kind and
availability, one string per platform as swift-docc encodes it: `"iOS: 17.0.0 -"`
(introduced, not deprecated), `"macOS: 10.2.0 - 10.10.0"` (deprecated in 10.10),
`"iPadOS: -"` (unavailable), an empty list (nothing stated). The copyright line is no
answer to anything and is dropped; links the exporter left unresolved (``` ``doc://…`` ```,
`<doc://…>`) keep their last path part as readable text.
"""

from __future__ import annotations

import json
import re
from typing import Any

from chunkers.sources.published.docc_render import APPLE_HOST
from chunkers.sources.published.model import FormatError, Published
from chunkers.tagging.availability import platform_key

_OPEN = "<!--"
_CLOSE = "-->"
_COPYRIGHT = re.compile(
    r"\n[ \t]*-{3,}[ \t]*\n\s*Copyright\b[^\n]*\bApple Inc\.[^\n]*\s*\Z", re.IGNORECASE
)
_APPLE_COPYRIGHT = re.compile(r"Copyright\b[^\n]*\bApple Inc\.", re.IGNORECASE)
_DOC_SYMBOL = re.compile(r"``doc://[^`\s]*?([^/`\s]+)``")
_DOC_ANGLE = re.compile(r"<doc://[^>\s]*?([^/>\s]+)>")


def is_apple_markdown(text: str) -> bool:
    """Whether a Markdown text opens with swift-docc's metadata comment: `<!--`, then a JSON
    object."""
    head = text.lstrip("\ufeff")
    return head.startswith(_OPEN) and head[len(_OPEN) :].lstrip().startswith("{")


def read_apple_markdown(text: str) -> Published:
    text = text.lstrip("\ufeff")
    end = text.find(_CLOSE)
    if end < 0:
        raise FormatError("metadata comment is never closed (no '-->')", 1)
    raw = text[len(_OPEN) : end]
    try:
        meta = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise FormatError(
            f"metadata comment is not JSON: {exc.msg}", exc.lineno, "metadata"
        ) from exc
    if not isinstance(meta, dict):
        raise FormatError("metadata comment is not a JSON object", 1, "metadata")
    body = text[end + len(_CLOSE) :]
    apple = bool(_APPLE_COPYRIGHT.search(body[-2000:]))
    body = _COPYRIGHT.sub("\n", body)
    body = _DOC_ANGLE.sub(lambda m: m.group(1), _DOC_SYMBOL.sub(r"`\1`", body))
    # The comment's lines stay as blank lines, so that a chunk's line numbers are the file's.
    text_out = "\n" * text[: end + len(_CLOSE)].count("\n") + body
    identifier = meta.get("identifier") if isinstance(meta.get("identifier"), str) else None
    fields: dict[str, Any] = {}
    platforms = availability_field(meta.get("availability"))
    if platforms:
        fields["platforms"] = platforms
        if any("deprecated_in" in b for b in platforms.values()):
            fields["deprecated"] = True
    if isinstance(meta.get("framework"), str) and meta["framework"].strip():
        fields["frameworks"] = [meta["framework"].strip()]
    metadata: dict[str, Any] = {}
    raw_symbol = meta.get("symbol")
    symbol: dict[str, Any] = raw_symbol if isinstance(raw_symbol, dict) else {}
    for key, value in (("symbol_kind", symbol.get("kind")), ("role", meta.get("role")),
                       ("document_type", meta.get("documentType")),
                       ("docc_identifier", identifier)):  # fmt: skip
        if isinstance(value, str) and value:
            metadata[key] = value
    url = None
    if identifier and identifier.startswith("/"):
        url = APPLE_HOST + identifier.lower() if apple else identifier
    title = meta.get("title") if isinstance(meta.get("title"), str) else None
    return Published(
        text=text_out,
        language="markdown",
        source="apple_docs" if apple else "package_docs",
        format="apple_markdown",
        title=title.strip() if title and title.strip() else None,
        url=url,
        fields=fields,
        metadata=metadata,
    )


def availability_field(values: object) -> dict[str, dict[str, str]]:
    """swift-docc's availability strings → {platform: {"min", "deprecated_in",
    "unavailable"}}; platforms that are no OS ("App Store Connect API") are left out."""
    out: dict[str, dict[str, str]] = {}
    for value in values if isinstance(values, list) else []:
        if not isinstance(value, str) or ":" not in value:
            continue
        name, _, versions = value.partition(":")
        key = platform_key(name.strip())
        if key is None:
            continue
        parts = [p.strip() for p in versions.split("-") if p.strip()]
        if not parts:
            out.setdefault(key, {"unavailable": "true"})
            continue
        bounds = {"min": parts[0]}
        if len(parts) > 1:
            bounds["deprecated_in"] = parts[-1]
        out.setdefault(key, bounds)
    return out
