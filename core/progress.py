"""Progress of a long stage: counts, rates and ETA, logged every few seconds.

Embedding a corpus on a laptop CPU takes minutes; a silent process looks hung. Any stage
(embedding, loading, indexing) can report through this one helper so that logs read alike.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType

_LOG = logging.getLogger("rag.progress")


@dataclass(frozen=True)
class ProgressSnapshot:
    label: str
    done: int
    total: int
    tokens: int
    elapsed_s: float
    unit: str = "texts"

    @property
    def rate(self) -> float:
        """Items per second so far."""
        return self.done / self.elapsed_s if self.elapsed_s > 0 else 0.0

    @property
    def token_rate(self) -> float:
        return self.tokens / self.elapsed_s if self.elapsed_s > 0 else 0.0

    @property
    def eta_s(self) -> float | None:
        """Seconds left at the average rate so far; None before the first item."""
        if self.done >= self.total:
            return 0.0
        if self.rate <= 0:
            return None
        return (self.total - self.done) / self.rate

    def format(self) -> str:
        pct = 100.0 * self.done / self.total if self.total else 100.0
        parts = [f"{self.label}: {self.done}/{self.total} {self.unit} ({pct:.0f}%)"]
        parts.append(f"{self.rate:.1f} {self.unit}/s")
        if self.tokens:
            parts.append(f"{self.token_rate:,.0f} tokens/s")
        eta = self.eta_s
        if self.done < self.total:
            parts.append("ETA ?" if eta is None else f"ETA {_duration(eta)}")
        else:
            parts.append(f"in {_duration(self.elapsed_s)}")
        return ", ".join(parts)


LogTarget = logging.Logger | logging.LoggerAdapter[logging.Logger] | Callable[[str], object] | None


class Progress:
    """Counts work done; logs (and calls `on_update`) at most every `interval_s` seconds.

    `log` is a logger (reports at INFO), any callable taking the message (`logger.info`,
    `print`, a Prefect run logger's method), or None for silence; `on_update` receives
    every report as a `ProgressSnapshot`. `done()` reports the final figures only when the
    stage was long enough to have reported before (else at DEBUG to a logger), so that
    embedding a single query does not fill the log.
    """

    def __init__(
        self,
        total: int,
        label: str,
        *,
        log: LogTarget = _LOG,
        on_update: Callable[[ProgressSnapshot], None] | None = None,
        interval_s: float = 2.0,
        unit: str = "texts",
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.total = total
        self.label = label
        self.unit = unit
        self._log = log
        self._on_update = on_update
        self._interval_s = interval_s
        self._clock = clock
        self._start = clock()
        self._last_report = self._start
        self._reported = False
        self._reported_count = -1
        self.done_count = 0
        self.tokens = 0

    def advance(self, n: int = 1, *, tokens: int = 0) -> None:
        self.done_count += n
        self.tokens += tokens
        now = self._clock()
        if now - self._last_report >= self._interval_s:
            self._last_report = now
            self._report(logging.INFO, self.snapshot(now))

    def snapshot(self, now: float | None = None) -> ProgressSnapshot:
        now = self._clock() if now is None else now
        return ProgressSnapshot(
            label=self.label,
            done=self.done_count,
            total=self.total,
            tokens=self.tokens,
            elapsed_s=now - self._start,
            unit=self.unit,
        )

    def done(self) -> ProgressSnapshot:
        snap = self.snapshot()
        if self._reported_count == snap.done:  # the last advance already said it all
            return snap
        long_enough = self._reported or snap.elapsed_s >= self._interval_s
        self._report(logging.INFO if long_enough else logging.DEBUG, snap)
        return snap

    def _report(self, level: int, snap: ProgressSnapshot) -> None:
        self._reported = self._reported or level >= logging.INFO
        self._reported_count = snap.done
        if isinstance(self._log, logging.Logger | logging.LoggerAdapter):
            self._log.log(level, "%s", snap.format())
        elif self._log is not None and level >= logging.INFO:
            self._log(snap.format())
        if self._on_update is not None:
            self._on_update(snap)

    def __enter__(self) -> Progress:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is None:
            self.done()


def _duration(seconds: float) -> str:
    seconds = max(0.0, seconds)
    if seconds < 60:
        return f"{seconds:.0f}s"
    minutes, secs = divmod(int(round(seconds)), 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"
