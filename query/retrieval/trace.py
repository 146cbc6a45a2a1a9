"""What one request records as it runs: timings per stage, notes, the fusion it used, and
the search paths each index took (which the response names in one note)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from query.errors import DEGRADED

STAGES = (
    "expand",
    "embed",
    "vector",
    "bm25",
    "fuse",
    "links",
    "corag",
    "rerank",
    "pack",
    "total",
)
# The search paths a store reports (IndexStore.search_paths), as the note names them.
PATH_LABELS = {"keyword_path": "keyword path", "vector_path": "vector path"}


class Trace:
    """Timings per stage (milliseconds, summed over repeats) and notes of one request."""

    def __init__(self) -> None:
        self.timings: dict[str, float] = dict.fromkeys(STAGES, 0.0)
        self.notes: list[str] = []
        self.fusion: dict[str, Any] | None = None  # the first fusion's method and weights
        # keyword_path / vector_path -> index -> the paths its searches took, in order.
        self.paths: dict[str, dict[str, list[str]]] = {}

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.timings[name] += (time.perf_counter() - started) * 1000.0

    def note(self, message: str) -> None:
        if message not in self.notes:
            self.notes.append(message)

    def degrade(self, message: str) -> None:
        """A note that something meant to run did not; --strict turns it into exit 1."""
        self.note(DEGRADED + message)

    @property
    def degraded(self) -> bool:
        return any(n.startswith(DEGRADED) for n in self.notes)

    def rounded_timings(self) -> dict[str, float]:
        return {k: round(v, 2) for k, v in self.timings.items()}

    def took(self, kind: str, index: str, path: str) -> None:
        """A search of `index` took `path` (`kind`: keyword_path or vector_path)."""
        taken = self.paths.setdefault(kind, {}).setdefault(index, [])
        if path not in taken:
            taken.append(path)

    def paths_note(self) -> str | None:
        """One note naming the paths the searches took: "keyword path: postings; vector path:
        exact" when every index took the same, else per index ("keyword path: docs postings,
        app fts5"); None when nothing was searched."""
        parts = []
        for kind, label in PATH_LABELS.items():
            by_index = self.paths.get(kind)
            if not by_index:
                continue
            taken = {name: "+".join(paths) for name, paths in by_index.items()}
            if len(set(taken.values())) == 1:
                parts.append(f"{label}: {next(iter(taken.values()))}")
            else:
                parts.append(f"{label}: " + ", ".join(f"{n} {p}" for n, p in taken.items()))
        return "; ".join(parts) or None
