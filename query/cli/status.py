"""`python -m query status`, readable: each index's health first, then its counts."""

from __future__ import annotations

import json
from typing import Any

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


def render_status(status: dict[str, Any]) -> str:
    lines = [f"store {status['store']}: {len(status['indexes'])} index(es)"]
    for name, stats in status["indexes"].items():
        lines.append(f"\n{name}")
        keys = [k for k in _LEADING if k in stats]
        keys += sorted(k for k in stats if k not in _LEADING and k != "name")
        for key in keys:
            value = stats[key]
            shown = json.dumps(value) if isinstance(value, (dict, list)) else value
            lines.append(f"  {key}: {shown}")
    return "\n".join(lines)
