"""YAML-style front matter (`---` … `---` at the very top of a markdown file).

A deliberately small parser instead of a YAML dependency: front matter in docs is flat
`key: value` pairs, lists and the odd nested map. Scalars stay strings except true/false/null:
version numbers such as `17.10` must not turn into floats.
"""

from __future__ import annotations

import re
from typing import Any

_KEY = re.compile(r"""^(?:"([^"]+)"|'([^']+)'|([^\s#'"][^:]*?))\s*:(?:\s+(.*))?$""")
_DELIMITERS = ("---", "...")


def split_front_matter(text: str) -> tuple[dict[str, Any], str, int]:
    """(metadata, body, number of lines removed before the body).

    Text that does not open with a closed, parseable front matter block comes back whole
    with empty metadata and offset 0."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].lstrip("\ufeff").rstrip() != "---":
        return {}, text, 0
    close = next((j for j in range(1, len(lines)) if lines[j].rstrip() in _DELIMITERS), None)
    if close is None:
        return {}, text, 0
    meta = _mapping([line.rstrip("\r\n") for line in lines[1:close]])
    if meta is None:  # a thematic break followed by prose, not front matter
        return {}, text, 0
    return meta, "".join(lines[close + 1 :]), close + 1


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _is_blank(line: str) -> bool:
    stripped = line.strip()
    return not stripped or stripped.startswith("#")


def _is_item(line: str) -> bool:
    stripped = line.strip()
    return stripped == "-" or stripped.startswith("- ")


def _mapping(lines: list[str]) -> dict[str, Any] | None:
    """Parse `key: value` lines at one indentation; None if a line is not of that form."""
    content = [line for line in lines if not _is_blank(line)]
    if not content:
        return {}
    base = _indent(content[0])
    result: dict[str, Any] = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if _is_blank(line):
            continue
        m = _KEY.match(line.strip())
        if not m or _indent(line) != base:
            return None
        key = m.group(1) or m.group(2) or m.group(3)
        rest = (m.group(4) or "").strip()
        children: list[str] = []
        # A key's value continues on deeper lines, or on `- item` lines at the key's indent.
        while i < len(lines) and (
            _is_blank(lines[i])
            or _indent(lines[i]) > base
            or (not rest and _is_item(lines[i]) and _indent(lines[i]) == base)
        ):
            children.append(lines[i])
            i += 1
        result[key] = _value(rest, children)
    return result


def _value(rest: str, children: list[str]) -> Any:
    if rest[:1] in ("|", ">") and rest.rstrip("-+") in ("|", ">"):
        texts = _dedent(children)
        joiner = "\n" if rest.startswith("|") else " "
        return joiner.join(texts).strip()
    if rest:
        more = [c.strip() for c in children if c.strip()]
        return _scalar(" ".join([rest, *more])) if more else _scalar(rest)
    content = [c for c in children if not _is_blank(c)]
    if not content:
        return None
    if _is_item(content[0]):
        return _items(content)
    nested = _mapping(_dedent(children))
    return nested if nested is not None else " ".join(c.strip() for c in content)


def _dedent(lines: list[str]) -> list[str]:
    content = [line for line in lines if line.strip()]
    cut = min((_indent(line) for line in content), default=0)
    return [line[cut:] for line in lines]


def _items(lines: list[str]) -> list[Any]:
    """`- item` lines; an item may be a small mapping continued on deeper lines."""
    base = _indent(lines[0])
    groups: list[list[str]] = []
    for line in lines:
        if _is_item(line) and _indent(line) == base:
            groups.append([" " * (base + 2) + line.strip()[2:]])
        elif groups:
            groups[-1].append(line)
    items: list[Any] = []
    for group in groups:
        first = group[0].strip()
        if len(group) > 1 or (_KEY.match(first) and not first.startswith(("[", "{", '"', "'"))):
            nested = _mapping(_dedent(group))
            if nested is not None:
                items.append(nested)
                continue
        items.append(_scalar(" ".join(g.strip() for g in group)))
    return items


def _scalar(raw: str) -> Any:
    text = raw.strip()
    if text[:1] in ('"', "'"):
        return _unquote(text)
    if text.startswith("[") and text.endswith("]"):
        return [_scalar(part) for part in _split_flow(text[1:-1])]
    if text.startswith("{") and text.endswith("}"):
        pairs = (part.partition(":") for part in _split_flow(text[1:-1]))
        return {_unquote(k.strip()): _scalar(v) for k, _, v in pairs}
    text = re.sub(r"\s+#.*$", "", text)  # a trailing comment, only on plain scalars
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered in ("null", "~", ""):
        return None
    return text


def _unquote(text: str) -> str:
    quote = text[:1]
    if quote not in ('"', "'"):
        return text
    end = text.rfind(quote)
    inner = text[1:end] if end > 0 else text[1:]
    if quote == "'":
        return inner.replace("''", "'")
    return re.sub(r'\\(["\\nt])', lambda m: {"n": "\n", "t": "\t"}.get(m[1], m[1]), inner)


def _split_flow(text: str) -> list[str]:
    """Split `a, "b, c", [d, e]` at top-level commas."""
    parts: list[str] = []
    depth, quote, start = 0, "", 0
    for i, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]
