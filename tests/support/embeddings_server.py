"""A real `python -m query embeddings-server` in a child process, for the tests that talk to
one or to a pool of them: started on a free port (`--port 0 --json`), ready once it has
printed its JSON line (it listens from then on), stopped with SIGTERM."""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.paths import ROOT

START_TIMEOUT_S = 180.0  # a cold start builds the ONNX graph; a loaded box is slow


@dataclass
class RunningEmbeddingsServer:
    process: subprocess.Popen[str]
    url: str  # http://127.0.0.1:PORT; EMBEDDING_ENDPOINT for a client
    identity: dict[str, Any]  # the JSON line: url, model, revision, runtime, precision, dim
    log: Path  # its stderr

    def stop(self, timeout_s: float = 20.0) -> int:
        """SIGTERM, then its exit code (SIGKILL if it does not stop in time)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process.stdout:
            self.process.stdout.close()
        return self.process.returncode


def start_embeddings_server(
    log: Path, *flags: str, env: Mapping[str, str] | None = None
) -> RunningEmbeddingsServer:
    """A server on a free loopback port, with `flags` added (a --token-file, say); the
    environment is this one's (RAG_AUTH_TOKEN removed) updated with `env`."""
    environment = {k: v for k, v in os.environ.items() if k != "RAG_AUTH_TOKEN"}
    environment.update(env or {})
    with log.open("w") as err:
        process = subprocess.Popen(
            [sys.executable, "-m", "query", "embeddings-server", "--port", "0", "--json", *flags],
            cwd=ROOT,  # the checkout's code, not an installed copy
            env=environment,
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
        )
    assert process.stdout is not None
    line = ""
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + START_TIMEOUT_S
        while not line and process.poll() is None and time.monotonic() < deadline:
            if selector.select(timeout=0.5):
                line = process.stdout.readline()
    if not line:
        process.kill()
        process.wait()
        raise AssertionError(f"the embeddings server did not start: {log.read_text()[-2000:]}")
    identity = json.loads(line)
    return RunningEmbeddingsServer(process, identity["url"], identity, log)


@contextmanager
def embeddings_server(
    log: Path, *flags: str, env: Mapping[str, str] | None = None
) -> Iterator[RunningEmbeddingsServer]:
    server = start_embeddings_server(log, *flags, env=env)
    try:
        yield server
    finally:
        server.stop()
