"""Hold points: named moments of an ingest where a crash or a fault can be staged exactly.

The points are `chunk:n` (n documents chunked), `load:n` (before load batch n of the
lexical phase, 0-based, so `load:1` comes with the first batch committed), `embed:n` (n
embedding batches reached the cache) and `vectors:n` (before the vector phase commits page
n, 0-based). One mechanism serves two audiences:

- `RAG_HOLD_AT=stage:n` makes the run print `holding at stage:n` to stderr and sleep there
  until killed. The crash tests SIGKILL the process at that moment; an operator can do the
  same to rehearse a recovery. Without the setting nothing holds. It is a test hook, read
  from the environment only: a config file that names it is refused (core/settings/),
  or a cloned repository's `.rag-retrieve.toml` could hang every ingest.
- In process, `HoldPoints(hook=...)` calls the hook at every point reached, with its stage
  and count: the fault tests raise there, or let a reader look between two commits.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

STAGES = ("chunk", "load", "embed", "vectors")

# What a test does at each point: (stage, count) -> None, or raise to fail the run there.
Hook = Callable[[str, int], None]


def parse_hold(spec: str | None) -> tuple[str, int] | None:
    """("embed", 2) for "embed:2"; ValueError naming the expected shape otherwise."""
    if not spec:
        return None
    stage, _, count = spec.partition(":")
    if stage not in STAGES or not count.isdigit():
        raise ValueError(f"{spec!r}: use STAGE:N with STAGE one of {', '.join(STAGES)}")
    return stage, int(count)


class HoldPoints:
    """Counts progress per stage; holds where `spec` says, and calls `hook` at every point."""

    def __init__(self, spec: str | None = None, *, hook: Hook | None = None) -> None:
        self.target = parse_hold(spec)
        self.hook = hook
        self.counts = dict.fromkeys(STAGES, -1)

    def reached(self, stage: str, count: int) -> None:
        """The stage has now done `count` units in all (progress may jump several at once)."""
        before, self.counts[stage] = self.counts[stage], count
        if self.hook is not None:
            self.hook(stage, count)
        if self.target and self.target[0] == stage and before < self.target[1] <= count:
            print(f"holding at {stage}:{self.target[1]}", file=sys.stderr, flush=True)
            while True:  # until killed
                time.sleep(3600)

    def advance(self, stage: str, by: int = 1) -> None:
        self.reached(stage, max(self.counts[stage], 0) + by)

    def counter(self, stage: str) -> Callable[..., None]:
        """A callback that advances `stage` by one per call, whatever it is passed."""
        return lambda *_: self.advance(stage)
