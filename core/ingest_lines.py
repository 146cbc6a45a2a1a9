"""The JSON lines `python -m flows.ingest --json` prints on stdout: one schema for the CLI that
writes them and the programs that read them (the MCP server's ingest tool and watcher), so
that no reader depends on the wording of the human lines on stderr.

Every line is one JSON object whose `"kind"` says what it is:

- `"reject"`: a record or file that could not be used, one line each, before the summary
  (or run line) of the run that met it: `file`, `line` (null for a whole file), `reason`,
  `field` (the record's field at fault, or null); under `--watch` also `run`.
- `"summary"`: the run's counts (loaders.summary's SUMMARY_KEYS), breakdowns by name
  (BREAKDOWN_KEYS), then where its time went (TIMING_KEYS): `stages`, seconds per stage,
  and for an ingest `phases`: `startup` (the process's start to its first step), `lexical`
  (when it ran before the flow), `prepare`, `api_wait`, `flow`, `total`, `searchable` (the
  process's start to the index answering keyword questions; null when the flow ran it) and
  `api_start` (Prefect's temporary server's start; null with a configured API). The last
  line of a run that finished: exit 0, or 1 if records were rejected (the rest is written).
- `"run"`: under `--watch`, one per run: `run` (1 is the initial ingest), `changed_paths`
  (how many), the counts if the ingest finished, and `error` if the run failed.
- `"totals"`: under `--watch`, the last line once the watch stops: `runs`, `runs_failed` and
  the counts summed over the runs.
- `"error"`: the last line of a command that failed: `message` (the text of stderr's
  `error:` line) and `exit_code`: 2 for bad arguments or settings (nothing was done), 1 for
  work that failed, 130 for an interrupted watch.

Anything else on stdout (a library's stray print) is not such an object; readers skip it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

KIND = "kind"
REJECT = "reject"
SUMMARY = "summary"
RUN = "run"
TOTALS = "totals"
ERROR = "error"
KINDS = (REJECT, SUMMARY, RUN, TOTALS, ERROR)
# A summary's breakdowns by name (name → count), and its timings (name → seconds).
BREAKDOWN_KEYS = ("chunks_by_language", "skipped_by_type")
TIMING_KEYS = ("stages", "phases")


def encode(kind: str, fields: Mapping[str, Any]) -> str:
    """One line of the schema: `kind` first, then `fields`."""
    if kind not in KINDS:
        raise ValueError(f"not a kind of ingest line: {kind!r}")
    return json.dumps({KIND: kind, **fields})


def reject_line(reject: Mapping[str, Any], run: int | None = None) -> str:
    """The line for one reject (`Reject.to_dict()`), of watch run `run` if given."""
    fields = {key: reject.get(key) for key in ("file", "line", "reason", "field")}
    return encode(REJECT, fields if run is None else {RUN: run, **fields})


def error_line(message: str, exit_code: int) -> str:
    return encode(ERROR, {"message": message, "exit_code": exit_code})


def parse(text: str) -> dict[str, Any] | None:
    """`text` as a line of the schema, or None if it is not one (a library's print)."""
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if isinstance(value, dict) and value.get(KIND) in KINDS:
        return value
    return None


def where(reject: Mapping[str, Any]) -> str:
    """`file:line`, or the file alone for a reject of a whole file."""
    return f"{reject['file']}:{reject['line']}" if reject.get("line") else str(reject["file"])
