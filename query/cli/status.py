"""`python -m query status`, readable: each index's health first, then its counts; an index
whose chunks wait for vectors shows how far its embedding is and the command that goes on."""

from __future__ import annotations

import json
from typing import Any

from core.store.coverage import percent

# Shown first, in this order, in the readable listing; other keys follow alphabetically.
_LEADING = (
    "health",
    "documents",
    "chunks",
    "vectors",
    "model_id",
    "dim",
    "embedding_precision",
)
# Said by the `vectors` line instead.
_IN_VECTORS_LINE = ("vector_coverage", "chunks_pending")


def render_status(status: dict[str, Any]) -> str:
    lines = [f"store {status['store']}: {len(status['indexes'])} index(es)"]
    for name, stats in status["indexes"].items():
        lines.append(f"\n{name}")
        keys = [k for k in _LEADING if k in stats]
        keys += sorted(k for k in stats if k not in (*_LEADING, *_IN_VECTORS_LINE, "name"))
        for key in keys:
            value = stats[key]
            shown = json.dumps(value) if isinstance(value, (dict, list)) else value
            if key == "vectors" and stats.get("chunks_pending"):
                shown = _progress(name, stats)
            lines.append(f"  {key}: {shown}")
    return "\n".join(lines)


def _progress(name: str, stats: dict[str, Any]) -> str:
    """ "37% (7,090 of 11,258 chunks wait; `rag-retrieve embed --index docs`)"."""
    pending, chunks = stats["chunks_pending"], stats.get("chunks") or 0
    return (
        f"{percent(pending, chunks)} ({pending:,} of {chunks:,} chunks wait; "
        f"`rag-retrieve embed --index {name}`)"
    )
