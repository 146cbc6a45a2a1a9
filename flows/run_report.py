"""The artifact every operations run leaves in Prefect: counts, timings and rejects as
markdown tables, published even when the run fails so the operator sees how far it got."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from prefect.artifacts import create_markdown_artifact

from flows.index_lock import SlotTimes
from loaders.summary import IngestSummary

MAX_REJECT_ROWS = 200


@dataclass
class RunReport:
    title: str
    counts: dict[str, Any] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    slot: SlotTimes | None = None
    rejects: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    error: str | None = None

    def add_ingest(self, summary: IngestSummary, prefix: str = "") -> None:
        """Counts, stage timings, rejects and notes of an ingest run that is part of this one."""
        for key, value in summary.counts().items():
            if key != "seconds":
                self.counts[f"{prefix}{key}"] = value
        for stage, seconds in summary.timings.items():
            self.timings[f"{prefix}{stage}"] = seconds
        self.add_rejects(summary.rejects)
        self.notes.extend(summary.notes)
        if summary.rejects_file:
            self.notes.append(f"rejects also written to {summary.rejects_file}")

    def add_rejects(self, rejects: list[dict[str, Any]]) -> None:
        """Rejects not listed yet (two reads of one file report the same line twice)."""
        seen = {(r["file"], r.get("line"), r["reason"]) for r in self.rejects}
        for reject in rejects:
            if (reject["file"], reject.get("line"), reject["reason"]) not in seen:
                seen.add((reject["file"], reject.get("line"), reject["reason"]))
                self.rejects.append(reject)

    def markdown(self) -> str:
        status = f"**Failed:** {_cell(self.error)}\n\n" if self.error else ""
        counts = "\n".join(f"| {k} | {v} |" for k, v in self.counts.items())
        timing_rows = [(k, f"{v:.3f}") for k, v in self.timings.items()]
        if self.slot is not None:
            timing_rows.extend(self.slot.rows())
        timings = "\n".join(f"| {k} | {v} |" for k, v in timing_rows)
        text = (
            f"# {self.title}\n\n{status}"
            f"| count | value |\n|---|---|\n{counts}\n\n"
            f"| timing | seconds or time |\n|---|---|\n{timings}\n"
        )
        if self.rejects:
            shown = self.rejects[:MAX_REJECT_ROWS]
            rows = "\n".join(
                f"| {_cell(r['file'])} | {r.get('line') or ''} | {_cell(r.get('field') or '')} "
                f"| {_cell(r['reason'])} |"
                for r in shown
            )
            more = len(self.rejects) - len(shown)
            tail = f"\n\n…and {more} more rejects." if more else ""
            text += (
                f"\n## Rejects ({len(self.rejects)})\n\n"
                f"| file | line | field | reason |\n|---|---|---|---|\n{rows}{tail}\n"
            )
        if self.notes:
            text += "\n## Notes\n\n" + "\n".join(f"- {n}" for n in self.notes) + "\n"
        return text

    def result(self) -> dict[str, Any]:
        """What the flow returns: counts, timings and the slot window, JSON-ready."""
        out: dict[str, Any] = {"counts": dict(self.counts), "timings": dict(self.timings)}
        if self.slot is not None:
            out["slot"] = {
                "index": self.slot.index,
                "waited_s": self.slot.waited_s,
                "acquired": self.slot.acquired.isoformat() if self.slot.acquired else None,
                "released": self.slot.released.isoformat() if self.slot.released else None,
            }
        out["rejects"] = list(self.rejects)
        return out


@contextmanager
def reported(report: RunReport, key: str, description: str) -> Iterator[RunReport]:
    """Time the block as `total`, then publish the report as artifact `key`, failed or not."""
    started = time.perf_counter()
    try:
        yield report
    except Exception as exc:
        report.error = f"{type(exc).__name__}: {exc}"
        raise
    finally:
        report.timings["total"] = round(time.perf_counter() - started, 3)
        create_markdown_artifact(
            key=artifact_key(key), markdown=report.markdown(), description=description
        )


def artifact_key(text: str) -> str:
    # Artifact keys allow lowercase letters, digits and dashes only.
    cleaned = "".join(ch if ch.isascii() and ch.isalnum() else "-" for ch in text.lower())
    return "-".join(part for part in cleaned.split("-") if part) or "run"


def _cell(value: Any) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")
