"""Analysing a load batch's text in a second process while the writer inserts its rows.

Analysis (`analyzed_text`) is about a third of a SQLite load and pure Python, so a thread
cannot overlap it with the writes: measured slower, the writer waits for the GIL after every
row it steps. A child process can, on the second core that a load otherwise leaves idle (the
embeddings are computed before it starts).

Why a child of our own (`python -P -m core.store.sqlite.analysis_process`, pickles over its
stdin and stdout) and not `multiprocessing`: spawn and forkserver import the caller's
`__main__` in the child (a Prefect flow: seconds of imports), and fork copies a process whose
other threads (Prefect's, torch's) may hold locks. This child imports the analyzer only and
starts in tens of milliseconds.

`concurrent.futures.ProcessPoolExecutor` on the spawn context, doing the same split
(bench/analysis_child.py), was measured against it on 2026-11-27 (04:38–04:57 UTC, this
2-core VM, load average 4.7–7.3: an eval, other engineers' pytest runs with their Prefect
servers and a watch ingest throughout, this session's tests during the second run), ours
and the pool alternated in each run:
`.venv/bin/python bench/analysis_child.py --chunks 20000 100000 --rounds 3`, then `--rounds 2`
with CPU time. Load throughput, pool / ours per round: 20k chunks 1.26, 0.83, 1.44, 1.32,
0.88; 100k chunks 1.05, 0.83, 1.46, 1.00, 1.27 (ours 690–2,340 chunks/s: the other jobs set
the pace). CPU time of both processes per 1,000 chunks: 20k 376 / 396 ms ours, 352 / 422
pool; 100k 375 / 390 ours, 376 / 375 pool. The work is the same, but that the pool's
throughput is within 5 % of ours is not shown by a spread of ±40 %, and the bench's
`__main__` is light where a Prefect flow's is not; so ours stays until a quiet box shows it.

The results are the same either way: analysis is a pure function. Whenever the child cannot
answer (it died, was killed, could not start), the batch is analysed in this process and
the child is not tried again.
"""

from __future__ import annotations

import logging
import pickle
import select
import subprocess
import sys
from collections.abc import Callable, Sequence
from typing import BinaryIO

from core.own_command import python_module
from core.store.analyzer import analyzed_text

log = logging.getLogger(__name__)

# Below this much text a batch is analysed in place: the pickling costs about what the
# overlap would save.
MIN_OFFLOAD_CHARS = 256 * 1024

_SHARE_STEP = 0.05

Texts = Sequence[str | None]


def analyse_all(contexts: Texts, contents: Texts) -> list[str]:
    """The full-text body of every chunk: `analyzed_text(context, content)`."""
    return [analyzed_text(c, t) for c, t in zip(contexts, contents, strict=True)]


class InProcessAnalysis:
    """Every batch analysed in this process (the in-process analysis site of
    core/store/modes.py): AnalysisProcess's interface, without a child."""

    pid = None

    def submit(self, contexts: Texts, contents: Texts) -> Callable[[], list[str]]:
        return lambda: analyse_all(contexts, contents)

    def close(self) -> None:
        """Nothing to end."""


class AnalysisProcess:
    """One child process, started at the first batch large enough to be worth it."""

    def __init__(self) -> None:
        self._child: subprocess.Popen[bytes] | None = None
        self._failed = False
        self._pending = False
        # The child's share of each batch; this process analyses the rest after its own
        # writes. Adjusted after every batch towards the split at which both finish
        # together: when the second core is busy (tests, an embedding run) the share
        # shrinks and a load is no slower than analysing everything here.
        self.share = 0.7

    def submit(self, contexts: Texts, contents: Texts) -> Callable[[], list[str]]:
        """Start analysing the texts; the returned function returns their bodies, in order.
        Call it before the next `submit`."""
        if self._failed or sum(len(t or "") for t in contents) < MIN_OFFLOAD_CHARS:
            return lambda: analyse_all(contexts, contents)
        split = round(len(contents) * self.share)
        try:
            child = self._running()
            self._drain()
            assert child.stdin is not None
            request = (list(contexts[:split]), list(contents[:split]))
            pickle.dump(request, child.stdin, pickle.HIGHEST_PROTOCOL)
            child.stdin.flush()
            self._pending = True
        except (OSError, EOFError, pickle.PickleError) as exc:  # EOF: from the drain
            self._give_up(exc)
            return lambda: analyse_all(contexts, contents)

        def result() -> list[str]:
            rest = analyse_all(contexts[split:], contents[split:])
            child_first = self._ready()
            try:
                bodies = self._receive()
            except (OSError, EOFError, pickle.PickleError) as exc:
                self._give_up(exc)
                return analyse_all(contexts[:split], contents[:split]) + rest
            if len(bodies) != split:
                self._give_up(ValueError(f"{len(bodies)} bodies for {split} chunks"))
                return analyse_all(contexts[:split], contents[:split]) + rest
            step = _SHARE_STEP if child_first else -_SHARE_STEP
            self.share = min(1.0, max(0.0, self.share + step))
            return bodies + rest

        return result

    def _ready(self) -> bool:
        """Whether the child has started answering, without waiting for it."""
        assert self._child is not None and self._child.stdout is not None
        readable, _, _ = select.select([self._child.stdout], [], [], 0)
        return bool(readable)

    def close(self) -> None:
        """End the child: it exits when its stdin closes (killed if it still holds an
        answer nobody read, since it would block writing it)."""
        child, self._child = self._child, None
        if child is None:
            return
        if self._pending:
            child.kill()
        self._pending = False
        try:
            if child.stdin is not None:
                child.stdin.close()
        except OSError:
            child.kill()
        try:
            child.wait(timeout=5)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
        if child.stdout is not None:
            child.stdout.close()

    @property
    def pid(self) -> int | None:
        return self._child.pid if self._child is not None else None

    def _running(self) -> subprocess.Popen[bytes]:
        if self._child is None:
            self._child = subprocess.Popen(
                python_module("core.store.sqlite.analysis_process"),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
            )
        return self._child

    def _receive(self) -> list[str]:
        assert self._child is not None and self._child.stdout is not None
        self._pending = False
        bodies: list[str] = pickle.load(self._child.stdout)
        return bodies

    def _drain(self) -> None:
        """Read an answer nobody collected (its batch failed): the child blocks writing it,
        and would never read the next request."""
        if self._pending:
            self._receive()

    def _give_up(self, exc: BaseException) -> None:
        log.warning("analysing in this process from now on: the analysis child failed (%s)", exc)
        self._failed = True
        if self._child is not None:
            self._child.kill()
            self._pending = True  # so that close() does not wait on it
            self.close()


def _serve(requests: BinaryIO, answers: BinaryIO) -> None:
    while True:
        try:
            contexts, contents = pickle.load(requests)
        except EOFError:
            return
        pickle.dump(analyse_all(contexts, contents), answers, pickle.HIGHEST_PROTOCOL)
        answers.flush()


if __name__ == "__main__":
    _serve(sys.stdin.buffer, sys.stdout.buffer)
