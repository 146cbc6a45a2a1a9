"""DocC's render JSON content (inline and block nodes) as the Markdown our chunkers cut.

The render JSON schema (swift-docc's `RenderNode.spec.json`) nests `inlineContent` (text,
code voice, references, emphasis, ...) inside blocks (paragraphs, headings, code listings,
asides, lists, tables, term lists, rows, tab navigators). Each known node is written as a
reader of the page sees it; a node of a kind this module does not know is never dropped
silently: its `inlineContent`/`content` is read anyway, so a newer DocC with a new block
still yields its words. Images, videos and other media carry no searchable text and are left
out (their alt text stays, as an image's title is what the page says about it).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

References = Mapping[str, Any]
_DOC_URL = re.compile(r"doc://[^\s`'\"<>]*/([^/\s`'\"<>]+)")

# Aside styles as DocC renders their labels ("note" → "Note", custom names kept).
_ASIDE_LABELS = {"note": "Note", "important": "Important", "warning": "Warning", "tip": "Tip",
                 "experiment": "Experiment", "deprecated": "Deprecated"}  # fmt: skip


def reference_title(identifier: str, references: References) -> str:
    """What a page shows for a reference: its title, else the last part of the identifier
    (`doc://…/Map/init(bounds:)` → `init(bounds:)`), so an unresolvable one is still a name."""
    ref = references.get(identifier)
    if isinstance(ref, Mapping):
        title = ref.get("title")
        if isinstance(title, str) and title.strip():
            return title.strip()
        fragments = ref.get("fragments")
        if isinstance(fragments, list):
            joined = "".join(f.get("text", "") for f in fragments if isinstance(f, Mapping))
            if joined.strip():
                return joined.strip()
    return identifier.rstrip("/").rsplit("/", 1)[-1]


def readable_doc_urls(text: str) -> str:
    """A `doc://` URL left in a page's words (Apple's pages have a few) as the name it ends
    with: `doc://com.apple.documentation/…/glasseffect(_:in:isenabled:)` → the last part."""
    return _DOC_URL.sub(lambda m: m.group(1), text) if "doc://" in text else text


def inline_text(nodes: object, references: References) -> str:
    """Inline nodes as one line of Markdown."""
    if not isinstance(nodes, list):
        return ""
    out: list[str] = []
    for node in nodes:
        if not isinstance(node, Mapping):
            continue
        kind = node.get("type")
        if kind == "text":
            out.append(readable_doc_urls(str(node.get("text", ""))))
        elif kind == "codeVoice":
            out.append(f"`{node.get('code', '')}`")
        elif kind == "reference":
            title = node.get("overridingTitle") or reference_title(
                str(node.get("identifier", "")), references
            )
            out.append(f"`{title}`" if _is_symbol(node, references) else str(title))
        elif kind in ("emphasis", "strong", "newTerm", "inlineHead", "strikethrough"):
            inner = inline_text(node.get("inlineContent"), references)
            mark = {"emphasis": "*", "strong": "**", "strikethrough": "~~"}.get(str(kind), "")
            out.append(f"{mark}{inner}{mark}" if inner else "")
        elif kind in ("subscript", "superscript"):
            out.append(inline_text(node.get("inlineContent"), references))
        elif kind == "link":
            out.append(readable_doc_urls(str(node.get("title") or node.get("destination") or "")))
        elif kind == "image":
            ref = references.get(str(node.get("identifier", "")))
            alt = ref.get("alt") if isinstance(ref, Mapping) else None
            out.append(str(alt) if alt else "")
        elif "inlineContent" in node:
            out.append(inline_text(node.get("inlineContent"), references))
        elif isinstance(node.get("text"), str):
            out.append(node["text"])
    return "".join(out)


def _is_symbol(node: Mapping[str, Any], references: References) -> bool:
    ref = references.get(str(node.get("identifier", "")))
    return isinstance(ref, Mapping) and ref.get("kind") == "symbol"


def blocks_text(blocks: object, references: References, *, depth: int = 0) -> list[str]:
    """Block nodes as Markdown lines, blocks separated by a blank line."""
    if not isinstance(blocks, list):
        return []
    lines: list[str] = []
    for block in blocks:
        if isinstance(block, Mapping):
            part = _block(block, references, depth)
            if part:
                if lines:
                    lines.append("")
                lines.extend(part)
    return lines


def _block(block: Mapping[str, Any], refs: References, depth: int) -> list[str]:
    kind = block.get("type")
    if kind == "paragraph" or (kind is None and "inlineContent" in block):
        text = inline_text(block.get("inlineContent"), refs).strip()
        return [text] if text else []
    if kind == "heading":
        raw_level = block.get("level")
        level = raw_level if isinstance(raw_level, int) else 2
        text = str(block.get("text", "")).strip()
        return [f"{'#' * max(2, min(6, level))} {text}"] if text else []
    if kind == "codeListing":
        code = block.get("code")
        body = "\n".join(str(line) for line in code) if isinstance(code, list) else str(code or "")
        if not body.strip():
            return []  # a listing whose code the page lost is no answer to anything
        return [f"```{block.get('syntax') or ''}", *body.split("\n"), "```"]
    if kind == "aside":
        label = block.get("name") or _ASIDE_LABELS.get(str(block.get("style", "")).lower())
        inner = blocks_text(block.get("content"), refs, depth=depth)
        if not inner:
            return []
        first = f"{label}: {inner[0]}" if label else inner[0]
        return [f"> {line}" if line else ">" for line in [first, *inner[1:]]]
    if kind in ("unorderedList", "orderedList"):
        return _list(block, refs, depth, ordered=kind == "orderedList")
    if kind == "termList":
        out = []
        for item in _items(block):
            term = inline_text(_get(item, "term", "inlineContent"), refs).strip()
            definition = " ".join(blocks_text(_get(item, "definition", "content"), refs))
            out.append(f"- **{term}**: {definition.strip()}" if term else f"- {definition}")
        return out
    if kind == "table":
        return _table(block, refs)
    if kind == "row":
        columns = block.get("columns")
        cols = columns if isinstance(columns, list) else []
        return blocks_text([b for c in cols if isinstance(c, Mapping) for b in _seq(c, "content")],
                           refs, depth=depth)  # fmt: skip
    if kind == "tabNavigator":
        out = []
        for tab in _seq(block, "tabs"):
            if isinstance(tab, Mapping):
                inner = blocks_text(tab.get("content"), refs, depth=depth)
                out += ([f"**{tab.get('title')}**"] if tab.get("title") else []) + inner
        return out
    if kind == "links":
        # A page made of link cards (Human Interface Guidelines) says what each card holds
        # only in the referenced page's abstract.
        out = []
        for ident in _seq(block, "items"):
            ref = refs.get(str(ident))
            about = inline_text(ref.get("abstract"), refs) if isinstance(ref, Mapping) else ""
            title = reference_title(str(ident), refs)
            out.append(f"- {title}: {about.strip()}" if about.strip() else f"- {title}")
        return out
    if kind in ("small",):
        text = inline_text(block.get("inlineContent"), refs).strip()
        return [text] if text else []
    if kind in ("video", "image", "thematicBreak"):
        return []
    # Unknown block: keep its words.
    if "inlineContent" in block:
        text = inline_text(block.get("inlineContent"), refs).strip()
        return [text] if text else []
    return blocks_text(block.get("content"), refs, depth=depth)


def _list(block: Mapping[str, Any], refs: References, depth: int, *, ordered: bool) -> list[str]:
    out: list[str] = []
    indent = "  " * depth
    for number, item in enumerate(_items(block), start=1):
        inner = blocks_text(_seq(item, "content"), refs, depth=depth + 1)
        inner = [line for line in inner if line]
        if not inner:
            continue
        marker = f"{number}." if ordered else "-"
        out.append(f"{indent}{marker} {inner[0]}")
        out += [f"{indent}  {line}" for line in inner[1:]]
    return out


def _table(block: Mapping[str, Any], refs: References) -> list[str]:
    rows = [r for r in _seq(block, "rows") if isinstance(r, list)]
    if not rows:
        return []
    rendered = [
        ["<br>".join(blocks_text(cell, refs)).replace("|", "\\|") for cell in row] for row in rows
    ]
    width = max(len(r) for r in rendered)
    lines = ["| " + " | ".join(r + [""] * (width - len(r))) + " |" for r in rendered]
    return [lines[0], "|" + " --- |" * width, *lines[1:]]


def _items(block: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [i for i in _seq(block, "items") if isinstance(i, Mapping)]


def _seq(node: Mapping[str, Any], key: str) -> Sequence[Any]:
    value = node.get(key)
    return value if isinstance(value, list) else []


def _get(node: Mapping[str, Any], key: str, inner: str) -> object:
    value = node.get(key)
    return value.get(inner) if isinstance(value, Mapping) else None


def declaration_source(tokens: object) -> str:
    """A declaration's tokens joined into the source a reader sees."""
    if not isinstance(tokens, list):
        return ""
    return "".join(str(t.get("text", "")) for t in tokens if isinstance(t, Mapping)).strip()
