"""Hold points: stop an ingest at a named moment so that a crash can be reproduced exactly.

`RAG_HOLD_AT=stage:n` (stage: chunk, embed or load) makes the run print
`holding at stage:n` to stderr and sleep once it reaches that point: after n documents
chunked, after n embedding batches reached the cache, or before load batch n (0-based, so
`load:1` holds with the first batch committed). The crash tests SIGKILL the process there;
an operator can do the same to rehearse a recovery. Without the setting nothing holds.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

STAGES = ("chunk", "embed", "load")


def parse_hold(spec: str | None) -> tuple[str, int] | None:
    """("embed", 2) for "embed:2"; ValueError naming the expected shape otherwise."""
    if not spec:
        return None
    stage, _, count = spec.partition(":")
    if stage not in STAGES or not count.isdigit():
        raise ValueError(f"{spec!r}: use STAGE:N with STAGE one of {', '.join(STAGES)}")
    return stage, int(count)


class HoldPoints:
    """Counts progress per stage and holds where the setting says."""

    def __init__(self, spec: str | None) -> None:
        self.target = parse_hold(spec)
        self.counts = dict.fromkeys(STAGES, -1)

    def reached(self, stage: str, count: int) -> None:
        """The stage has now done `count` units in all (progress may jump several at once)."""
        before, self.counts[stage] = self.counts[stage], count
        if self.target and self.target[0] == stage and before < self.target[1] <= count:
            print(f"holding at {stage}:{self.target[1]}", file=sys.stderr, flush=True)
            while True:  # until killed
                time.sleep(3600)

    def advance(self, stage: str, by: int = 1) -> None:
        self.reached(stage, max(self.counts[stage], 0) + by)

    def counter(self, stage: str) -> Callable[..., None]:
        """A callback that advances `stage` by one per call, whatever it is passed."""
        return lambda *_: self.advance(stage)
