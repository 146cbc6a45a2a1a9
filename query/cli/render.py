"""The human-readable form of a response, for a terminal.

    1. 0.0325  Sources/Store/TripStore.swift:12-40 § TripStore.save()  [app · user_codebase]
       iOS 17.0+ · Swift 5.9 · SwiftData, CloudKit
       │ func save(_ trip: Trip) throws {
       │     context.insert(trip)

Works on the JSON dict (not the dataclass), so an answer from the worker renders the same.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

SNIPPET_LINES = 4
LINE_WIDTH = 100
LABEL_WIDTH = 90


def render(response: Mapping[str, Any]) -> str:
    chunks = response.get("chunks") or []
    if not chunks:
        return "no results"
    width = len(str(len(chunks)))
    positions = {c.get("chunk_id"): n for n, c in enumerate(chunks, start=1)}
    blocks = [_chunk(rank, chunk, width, positions) for rank, chunk in enumerate(chunks, start=1)]
    return "\n\n".join(blocks) + "\n\n" + _footer(response)


def _chunk(rank: int, chunk: Mapping[str, Any], width: int, positions: Mapping[Any, int]) -> str:
    pad = " " * (width + 2)
    head = f"{rank:>{width}}. {chunk.get('score', 0.0):.4f}  {_label(chunk)}"
    where = " · ".join(str(x) for x in (chunk.get("index"), chunk.get("source")) if x)
    lines = [f"{head}  [{where}]" if where else head]
    facts = _facts(chunk)
    link = chunk.get("linked_from")
    if link:
        by = positions.get(link.get("chunk_id"))
        place = f"#{by}" if by else "a top result"
        if link.get("relation") == "calls":
            named = f"linked: calls {link.get('name')}, declared in {place}"
        else:
            named = f"linked: {link.get('name')} named by {place}"
        facts = f"{facts} · {named}" if facts else named
    if facts:
        lines.append(f"{pad}{facts}")
    if chunk.get("url"):  # where a person opens it (a page, a talk at the cue)
        lines.append(f"{pad}{chunk['url']}")
    lines.extend(f"{pad}│ {line}" for line in _snippet(chunk.get("content") or ""))
    return "\n".join(lines)


def _label(chunk: Mapping[str, Any]) -> str:
    """Where the chunk is (path with lines, else title or URL) § what it is."""
    place = chunk.get("path") or chunk.get("title") or chunk.get("url") or chunk.get("chunk_id")
    start, end = chunk.get("start_line"), chunk.get("end_line")
    if chunk.get("path") and start:
        place = f"{place}:{start}" + (f"-{end}" if end and end != start else "")
    what = chunk.get("symbol") or chunk.get("context") or ""
    what = " ".join(str(what).split())
    label = f"{place} § {what}" if what and what != place else str(place)
    return label if len(label) <= LABEL_WIDTH else label[: LABEL_WIDTH - 1] + "…"


def _facts(chunk: Mapping[str, Any]) -> str:
    facts = []
    lo, hi = chunk.get("ios_version_min"), chunk.get("ios_version_max")
    if lo and hi:
        facts.append(f"iOS {lo}–{hi}")
    elif lo:
        facts.append(f"iOS {lo}+")
    elif hi:
        facts.append(f"iOS ≤{hi}")
    if chunk.get("swift_version"):
        facts.append(f"Swift {chunk['swift_version']}")
    if chunk.get("framework_tags"):
        facts.append(", ".join(chunk["framework_tags"]))
    if chunk.get("deprecated"):
        since = chunk.get("deprecated_in")
        facts.append(f"DEPRECATED in iOS {since}" if since else "DEPRECATED")
    ranks = chunk.get("ranks") or {}
    signals = chunk.get("signals") or {}
    shown = []
    for name, rank in ranks.items():
        if rank is None:
            continue
        added = (signals.get(name) or {}).get("contribution")
        shown.append(f"{name} #{rank}" + (f" (+{added:.3f})" if added is not None else ""))
    if shown:
        facts.append("ranks " + ", ".join(shown))
    return " · ".join(facts)


def _snippet(content: str) -> list[str]:
    lines = [line.rstrip() for line in content.splitlines() if line.strip()]
    out = [
        line if len(line) <= LINE_WIDTH else line[: LINE_WIDTH - 1] + "…"
        for line in lines[:SNIPPET_LINES]
    ]
    if len(lines) > SNIPPET_LINES:
        more = len(lines) - SNIPPET_LINES
        out.append(f"… ({more} more line{'s' if more > 1 else ''})")
    return out


def _footer(response: Mapping[str, Any]) -> str:
    chunks = response.get("chunks") or []
    timings = response.get("timings_ms") or {}
    parts = [f"{len(chunks)} chunk(s)", f"{response.get('total_tokens', 0)} tokens"]
    if "total" in timings:
        parts.append(f"{timings['total']:.0f} ms")
    text = ", ".join(parts)
    fusion = response.get("fusion") or {}
    if fusion.get("weights"):
        weights = ", ".join(f"{k} {v:.2f}" for k, v in fusion["weights"].items())
        text += f"\nfusion: {fusion['method']} ({weights})"
    variants = response.get("query_expansions") or []
    if len(variants) > 1:
        text += "\nsearched: " + " | ".join(variants)
    for hop in response.get("corag_trace") or []:
        found = len(hop.get("new_chunk_ids") or [])
        text += f"\nhop {hop.get('hop')}: {hop.get('query')} (+{found}; {hop.get('reason')})"
        named = dict.fromkeys(str(link.get("name")) for link in hop.get("links") or [])
        if named:
            text += "\n  linked: " + ", ".join(named)
    return text
