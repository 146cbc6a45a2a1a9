"""YAML front matter (`---` … `---` or `...` at the very top of a markdown file).

Parsed with PyYAML's safe loader minus the implicit int, float and timestamp rules: version
numbers such as `17.10` must stay the string they are written as (YAML 1.1 would read 17.1),
and dates stay as written. true/false/null keep their meaning.
"""

from __future__ import annotations

from typing import Any

import yaml

_DELIMITERS = ("---", "...")
_LITERAL_TAGS = {
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:timestamp",
}


class _StringScalarLoader(yaml.SafeLoader):
    """SafeLoader whose plain scalars are strings unless they are booleans or null."""


_StringScalarLoader.yaml_implicit_resolvers = {
    first: [(tag, pattern) for tag, pattern in rules if tag not in _LITERAL_TAGS]
    for first, rules in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def split_front_matter(text: str) -> tuple[dict[str, Any], str, int]:
    """(metadata, body, number of lines removed before the body).

    Text that does not open with a closed block of YAML key/value pairs comes back whole with
    empty metadata and offset 0: a thematic break followed by prose is not front matter."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].lstrip("\ufeff").rstrip() != "---":
        return {}, text, 0
    close = next((j for j in range(1, len(lines)) if lines[j].rstrip() in _DELIMITERS), None)
    if close is None:
        return {}, text, 0
    block = "".join(lines[1:close])
    try:
        meta = yaml.load(block, Loader=_StringScalarLoader)  # noqa: S506 - a safe loader
    except yaml.YAMLError:
        return {}, text, 0
    if meta is None and not block.strip(" \t\r\n"):
        meta = {}
    if not isinstance(meta, dict):
        return {}, text, 0
    return {str(k): _trimmed(v) for k, v in meta.items()}, "".join(lines[close + 1 :]), close + 1


def _trimmed(value: Any) -> Any:
    """Folded and literal blocks (`>`, `|`) end with a newline in YAML; a field does not."""
    if isinstance(value, str):
        return value.rstrip("\n")
    if isinstance(value, list):
        return [_trimmed(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _trimmed(v) for k, v in value.items()}
    return value
