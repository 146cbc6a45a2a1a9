"""How a client finds the worker of a store and knows it is ours (query/serve/worker_file.py):
the worker writes `<store>/worker.json` (0600) while it serves and proves it holds the
file's secret; a client sends a token or a question only after that proof. Whatever else
answers at the file's address (another user's process on the port) receives neither."""

from __future__ import annotations

import json
import os
import stat
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

import query.cli.main as cli_module
from query.cli.main import main
from query.serve import worker_file
from query.serve.client import find_worker, proven
from query.serve.worker import WorkerServer, make_server
from query.serve.worker_file import WorkerFile, WorkerFileRefused
from tests.support.query import fake_engine

TOKEN = "the-users-token"


@pytest.fixture
def store(tmp_path: Path) -> Path:
    directory = (tmp_path / "store").resolve()
    directory.mkdir()
    return directory


@contextmanager
def worker_on(store: Path, host: str = "127.0.0.1") -> Iterator[WorkerServer]:
    """A real worker serving `store` (an engine of test doubles opened there)."""
    engine = fake_engine()
    engine.store.location = str(store)  # type: ignore[misc]
    server = make_server(engine, host, 0, log=lambda line: None)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not worker_file.path_in(store).exists() and time.monotonic() < deadline:
        time.sleep(0.01)  # written as it starts serving
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


@contextmanager
def squatter(store: Path) -> Iterator[list[str]]:
    """A server that does not know the secret, holding the address the store's worker file
    names: it answers every request as a worker would, and keeps everything it is sent."""
    heard: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length).decode("utf-8", "replace")
            heard.append(f"{self.command} {self.path}\n{self.headers}\n{body}")
            reply = {"status": "ok", "store": str(store), "proof": "0" * 64, "chunks": []}
            payload = json.dumps(reply).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST = _answer  # noqa: N815 (http.server's naming)

        def log_message(self, format: str, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    host, port = httpd.server_address[:2]
    worker_file.write(WorkerFile.drawn(f"http://{host}:{port}", str(store)))
    try:
        yield heard
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture
def in_process(monkeypatch) -> list[str]:
    """The questions the CLI answered itself (with no chunks: no store is opened)."""
    asked: list[str] = []

    def here(fields, settings):
        asked.append(fields["query"])
        return {"chunks": [], "notes": []}

    monkeypatch.setattr(cli_module, "answer_here", here)
    monkeypatch.setenv("RAG_AUTH_TOKEN", TOKEN)
    monkeypatch.delenv("RAG_QUERY_WORKER_URL", raising=False)
    return asked


def test_a_serving_worker_writes_a_file_only_its_user_may_read(store):
    with worker_on(store) as server:
        info = worker_file.path_in(store).stat()
        written = worker_file.read(store)
        url = server.url
    assert stat.S_IMODE(info.st_mode) == 0o600 and info.st_uid == os.getuid()
    assert written is not None
    assert (written.url, written.pid, written.store) == (url, os.getpid(), str(store))


def test_the_worker_proves_it_holds_the_secret_and_nothing_else_does(store):
    with worker_on(store) as server:
        found = find_worker(str(store))
        assert found is not None and found.url == server.url
        assert not proven(replace(found, secret="another run's secret"))
        assert not proven(replace(found, store=str(store / "elsewhere")))


def test_the_file_goes_with_the_worker(store):
    with worker_on(store):
        assert worker_file.path_in(store).is_file()
    assert not worker_file.path_in(store).exists()


def test_a_dead_workers_file_finds_no_worker(store):
    with worker_on(store):
        left = worker_file.read(store)
    assert left is not None
    worker_file.write(left)  # as a killed worker leaves it
    assert find_worker(str(store)) is None


def test_a_file_others_may_read_is_refused(store, in_process, capsys):
    with worker_on(store):
        worker_file.path_in(store).chmod(0o644)
        with pytest.raises(WorkerFileRefused, match="mode 0644"):
            worker_file.read(store)
        assert main(["where is the trip archived", "--store", str(store)]) == 1
    assert in_process == ["where is the trip archived"]
    assert "ignored the worker file" in capsys.readouterr().err


def test_a_server_without_the_secret_never_receives_the_token_or_the_question(
    store, in_process, capsys
):
    with squatter(store) as heard:
        assert main(["where is the trip archived", "--store", str(store)]) == 1
    assert in_process == ["where is the trip archived"]
    assert heard and all(line.startswith("GET /live?challenge=") for line in heard)
    assert not any(TOKEN in line or "trip" in line for line in heard)


def test_a_named_worker_that_fails_its_files_proof_never_receives_the_token(
    store, in_process, capsys
):
    with squatter(store) as heard:
        url = worker_file.read(store).url
        assert main(["where is the trip archived", "--store", str(store), "--worker", url]) == 1
    assert in_process == ["where is the trip archived"]
    assert not any(TOKEN in line or "trip" in line for line in heard)
    assert f"{url} did not prove it is the worker of" in capsys.readouterr().err


def test_the_url_of_a_worker_on_ipv6_loopback_is_bracketed(store):
    with worker_on(store, "::1") as server:
        port = server.socket.getsockname()[1]
        assert server.url == f"http://[::1]:{port}"
        assert find_worker(str(store)) is not None  # and a client reaches it there


def test_a_worker_on_every_address_is_found_on_loopback(store):
    with worker_on(store, "0.0.0.0") as server:
        port = server.socket.getsockname()[1]
        assert server.url == f"http://127.0.0.1:{port}"
