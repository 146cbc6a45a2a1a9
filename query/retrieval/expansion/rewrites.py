"""The LLM path: the prompt asking for rewrites, and the tolerant parsing of the reply."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from query.retrieval.expansion.variants import unique_variants
from query.retrieval.llm import json_values

_LIST_LINE = re.compile(r"^[ \t]*(?:\d{1,2}[.):]|[-*•+])[ \t]+(.+?)[ \t]*$", re.MULTILINE)
_LIST_KEYS = ("queries", "rewrites", "variants", "expansions", "alternatives", "search_queries")
_ITEM_KEYS = ("query", "text", "rewrite", "q", "variant")


def rewrite_messages(
    query: str, domain: str | None, frameworks: Sequence[str], n: int
) -> list[dict[str, str]]:
    context = []
    if domain:
        context.append(f"Domain: {domain}")
    if frameworks:
        context.append(f"Frameworks: {', '.join(frameworks)}")
    return [
        {
            "role": "system",
            "content": (
                "You rewrite search queries for a hybrid keyword and embedding search over "
                "developer documentation and source code. Reply with only a JSON array of "
                "strings, no explanation."
            ),
        },
        {
            "role": "user",
            "content": (
                f"Write {max(1, n)} different search queries that would find the documents "
                "answering the question below. Use the exact API, type and framework names "
                "such documents contain; include one keyword-only query and one rephrasing. "
                "Do not answer the question.\n"
                + "".join(line + "\n" for line in context)
                + f"Question: {query}"
            ),
        },
    ]


def parse_rewrites(reply: Any) -> list[str]:
    """Rewrites from a model reply: the first JSON list of strings found (bare, fenced,
    inside an object, or inside prose), else the items of a numbered or bulleted list;
    [] when there are none. Cleaned, deduplicated, over-long items dropped."""
    if not isinstance(reply, str):
        return []
    for value in json_values(reply):
        found = _strings_in(value)
        if found:
            return unique_variants(found)
    return unique_variants([m[1] for m in _LIST_LINE.finditer(reply)])


def _strings_in(value: Any, depth: int = 0) -> list[str]:
    if isinstance(value, list):
        out = []
        for item in value:
            if isinstance(item, str):
                out.append(item)
            elif isinstance(item, dict):
                out.extend(v for k in _ITEM_KEYS if isinstance(v := item.get(k), str))
        return out
    if isinstance(value, dict) and depth < 2:
        keys = [k for k in _LIST_KEYS if k in value] + [k for k in value if k not in _LIST_KEYS]
        for key in keys:
            found = _strings_in(value[key], depth + 1)
            if found:
                return found
    return []
