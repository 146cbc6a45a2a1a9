"""The `endpoints` executor: shards spread over a pool of embedding servers.

Each server speaks the OpenAI `/v1/embeddings` protocol the HTTP runtime speaks
(core/embedding/http_runtime.py): `rag-retrieve embeddings-server` on other machines (MLX on
a Mac, ONNX on Linux), or TEI, Infinity, vLLM, Ollama. Servers of that kind scale by
replicas, and a client's keep-alive pins it to one of them, so the spreading is ours:
- a shard goes to the next server in rotation that is up and has room, with at most
  `concurrency` shards in flight per server (its requests follow each other on one
  connection, so a server never holds more than `concurrency` requests of ours);
- before a server gets work, it proves it serves the index's model: it embeds a few fixed
  texts, whose vectors must match the index's own embedder's (same dimension, every row at
  cosine >= MIN_PROBE_COSINE). A server of another model is refused for the run, so its
  vectors never reach the index; a model name says less than the vectors do;
- a shard that fails on a server (stopped, unreachable, an error, a bad reply) is run again
  on the others, up to `attempts` runs, then reported failed; the server that failed it is
  set aside until a probe passes again, at most every `recheck_s`;
- when no server of the pool answers for `give_up_s`, the shards still waiting are reported
  failed: their chunks stay pending for the next `embed`.
The threads here only wait on sockets; the vectors come back to loaders/sharded.py, which
loads them (or, for a TiDB index, the thread that ran the shard wrote it with its
done-record, as a Dask worker does).
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from urllib.parse import urlsplit

import numpy as np

from core.embedding.base import Embedder, EmbeddingEndpointError
from core.embedding.http_runtime import HTTPEmbedder
from core.embedding.runtimes import http_embedder
from core.settings import Settings
from loaders.executors.worker import ShardOutcome, ShardTask, run_shard

_LOG = logging.getLogger("rag.ingest")

# Texts a server embeds to prove its model: prose and code, short and long, since two models
# may agree on one kind of text and not the other.
PROBE_TEXTS = (
    "How do I persist a SwiftData model and sync it with CloudKit?",
    "func makeIterator() -> IndexingIterator<Self> { IndexingIterator(_elements: self) }",
    "def parse_header(value: str) -> tuple[str, dict[str, str]]:\n    return value, {}",
    "The closure captures the variable by reference; mark it weak to break the cycle.",
)
# The same model through another runtime or precision (ONNX fp32, MLX fp16, int8) agrees to
# >= 0.995 per text; a different model of the same dimension is far below 0.9.
MIN_PROBE_COSINE = 0.99


@dataclass
class _Server:
    endpoint: str
    shown: str  # the endpoint without credentials, for reports and logs
    in_flight: int = 0
    up: bool = False
    refused: str = ""  # why it serves another model: never used again in this run
    error: str = ""  # why it was last set aside
    checked_at: float = float("-inf")
    down_since: float | None = None


class EndpointsExecutor:
    name = "endpoints"

    def __init__(
        self,
        endpoints: list[str],
        settings: Settings,
        *,
        concurrency: int,
        attempts: int,
        recheck_s: float = 5.0,
        give_up_s: float = 60.0,
    ) -> None:
        self.servers = [_Server(e, _shown(e)) for e in endpoints]
        self.settings = settings
        self.concurrency = concurrency
        self.attempts = attempts
        self.recheck_s = recheck_s
        self.give_up_s = give_up_s
        self._reference: np.ndarray | None = None
        self._turn = 0

    def run(self, tasks: Iterable[ShardTask], reference: Embedder) -> Iterator[ShardOutcome]:
        self._reference = reference.embed_documents(list(PROBE_TEXTS))
        for server in self.servers:
            self._check(server)
        waiting = deque((task, 1) for task in tasks)
        running: dict[Future[ShardOutcome], tuple[ShardTask, int, _Server]] = {}
        pool = ThreadPoolExecutor(
            max_workers=len(self.servers) * self.concurrency, thread_name_prefix="endpoint"
        )
        try:
            while waiting or running:
                self._recheck()
                while waiting and (free := self._next_server()) is not None:
                    task, attempt = waiting.popleft()
                    free.in_flight += 1
                    future = pool.submit(self._run_on, free, task, attempt)
                    running[future] = (task, attempt, free)
                if not running:
                    stuck = self._stuck()
                    if stuck is None:
                        time.sleep(min(self.recheck_s, 0.5))
                        continue
                    while waiting:
                        task, attempt = waiting.popleft()
                        # attempts: the runs it had (none when the pool was down from the start)
                        yield ShardOutcome(task.shard, False, error=stuck, attempts=attempt - 1)
                    break
                done, _ = wait(running, timeout=self.recheck_s, return_when=FIRST_COMPLETED)
                for future in done:
                    task, attempt, server = running.pop(future)
                    server.in_flight -= 1
                    try:
                        outcome = future.result()
                    except Exception as exc:  # noqa: BLE001 - any failure moves the shard
                        error = f"{server.shown}: {type(exc).__name__}: {exc}"
                        if isinstance(exc, EmbeddingEndpointError):
                            self._set_aside(server, error)
                        if attempt < self.attempts:
                            waiting.appendleft((task, attempt + 1))
                        else:
                            yield ShardOutcome(task.shard, False, error=error, attempts=attempt)
                        continue
                    outcome.attempts = attempt
                    yield outcome
        finally:
            # A flow stopped mid-run leaves no request of ours running behind it.
            pool.shutdown(wait=False, cancel_futures=True)

    def _run_on(self, server: _Server, task: ShardTask, attempt: int) -> ShardOutcome:
        started = time.perf_counter()
        embedder = self._embedder(server.endpoint)
        embedder.dim = task.identity.dim  # proven by the probe; no probe request per shard
        try:
            return run_shard(task, embedder, attempt, server.shown, started)
        finally:
            embedder.close()

    def _embedder(self, endpoint: str) -> HTTPEmbedder:
        return http_embedder(self.settings.with_(embedding_endpoint=endpoint))

    def _next_server(self) -> _Server | None:
        """The next server in rotation that is up and has room."""
        count = len(self.servers)
        for step in range(count):
            server = self.servers[(self._turn + step) % count]
            if server.up and server.in_flight < self.concurrency:
                self._turn = (self._turn + step + 1) % count
                return server
        return None

    def _check(self, server: _Server) -> None:
        """Probe `server`: up when it answers with the index's model's vectors."""
        server.checked_at = time.monotonic()
        embedder = self._embedder(server.endpoint)
        embedder.timeout_s = min(embedder.timeout_s, 10.0)
        embedder.dim = 0  # learnt from the server: a wrong one is a refusal, said as such
        try:
            vectors = embedder.embed_documents(list(PROBE_TEXTS))
        except EmbeddingEndpointError as exc:
            self._set_aside(server, f"{server.shown}: {exc}")
            return
        finally:
            embedder.close()
        assert self._reference is not None
        refusal = _refusal(vectors, self._reference)
        if refusal:
            server.up, server.refused = False, f"{server.shown} refused: {refusal}"
            _LOG.warning("%s", server.refused)
            return
        if not server.up and server.down_since is not None:
            _LOG.warning("embedding server %s is back", server.shown)
        server.up, server.error, server.down_since = True, "", None

    def _set_aside(self, server: _Server, error: str) -> None:
        if server.up or server.down_since is None:
            _LOG.warning("embedding server set aside: %s", error)
        server.up, server.error = False, error
        server.checked_at = time.monotonic()
        if server.down_since is None:
            server.down_since = time.monotonic()

    def _recheck(self) -> None:
        """Probe the servers set aside whose wait is over."""
        now = time.monotonic()
        for server in self.servers:
            if not server.up and not server.refused and now - server.checked_at >= self.recheck_s:
                self._check(server)

    def _stuck(self) -> str | None:
        """Why no shard can run any more, or None while a server may still come back."""
        usable = [s for s in self.servers if not s.refused]
        now = time.monotonic()
        if usable and any(now - (s.down_since or now) < self.give_up_s for s in usable):
            return None
        reasons = "; ".join(s.refused or s.error for s in self.servers)
        return f"no embedding server of the pool can take the shard ({reasons})"


def _refusal(vectors: np.ndarray, reference: np.ndarray) -> str:
    """Why `vectors` (a server's, for PROBE_TEXTS) are not the index's model's, or ""."""
    if vectors.shape != reference.shape:
        return f"its vectors are {vectors.shape[1]}-d, the index's model's {reference.shape[1]}-d"
    cosines = np.sum(vectors * reference, axis=1) / (
        np.linalg.norm(vectors, axis=1) * np.linalg.norm(reference, axis=1) + 1e-12
    )
    worst = float(cosines.min())
    if worst < MIN_PROBE_COSINE:
        return (
            f"its vectors for the probe texts differ from the index's model's (cosine "
            f"{worst:.3f} < {MIN_PROBE_COSINE}): it serves another model"
        )
    return ""


def _shown(endpoint: str) -> str:
    """The endpoint without the user and password a URL may carry."""
    parts = urlsplit(endpoint)
    if parts.username is None and parts.password is None:
        return endpoint
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return parts._replace(netloc=netloc).geturl()
