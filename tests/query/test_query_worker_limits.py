"""The worker under load and abuse: 50 concurrent agents all answered, every malformed,
oversized, slow or deeply nested body refused with its own status (never a reset, never a
500), and a saturated worker turning requests away with 503 + Retry-After."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit

import pytest

import query.serve.worker
from core.settings import Settings
from query.serve.guard import Access
from query.serve.worker import WorkerLimits, make_server
from tests.support.query import build_stores, shared_engine

pytestmark = pytest.mark.slow

QUERY = {"query": "find the key window", "mode": "bm25", "expand": False, "rerank": False}


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    return shared_engine(build_stores(tmp_path_factory.getbasetemp() / "limit-stores"))


def running(engine, limits: WorkerLimits, access: Access | None = None):
    server = make_server(
        engine, "127.0.0.1", 0, limits=limits, log=lambda line: None, access=access
    )
    server.start_in_thread()
    host, port = urlsplit(server.url).hostname, urlsplit(server.url).port
    deadline = time.monotonic() + 10
    while not server.server.started and time.monotonic() < deadline:
        time.sleep(0.01)
    return server, host, port


@pytest.fixture(scope="module")
def worker(engine):
    server, host, port = running(engine, WorkerLimits(read_timeout_s=1.0, max_body_bytes=4096))
    yield host, port
    server.shutdown()
    server.server_close()


def send(host: str, port: int, body: bytes, headers: dict[str, str] | None = None):
    conn = http.client.HTTPConnection(host, port, timeout=60)
    try:
        headers = {"Content-Type": "application/json", **(headers or {})}
        conn.request("POST", "/retrieve", body=body, headers=headers)
        resp = conn.getresponse()
        return resp.status, resp.headers, json.loads(resp.read())
    finally:
        conn.close()


def test_fifty_concurrent_requests_are_all_answered(worker):
    host, port = worker
    body = json.dumps(QUERY).encode()
    with ThreadPoolExecutor(max_workers=50) as pool:
        results = list(pool.map(lambda _: send(host, port, body), range(50)))
    assert [status for status, _, _ in results] == [200] * 50
    assert all(payload["chunks"] for _, _, payload in results)


def test_fifty_concurrent_requests_with_a_token_are_all_answered(engine):
    access = Access.for_server("127.0.0.1", Settings(), "load-token")
    server, host, port = running(engine, WorkerLimits(), access)
    body = json.dumps(QUERY).encode()
    auth = {"Authorization": "Bearer load-token"}
    try:
        with ThreadPoolExecutor(max_workers=50) as pool:
            results = list(pool.map(lambda _: send(host, port, body, auth), range(50)))
    finally:
        server.shutdown()
        server.server_close()
    assert [status for status, _, _ in results] == [200] * 50


def test_invalid_json_is_a_400(worker):
    status, _, payload = send(*worker, b'{"query": ')
    assert status == 400 and payload["error"].startswith("invalid JSON")


def test_a_hundred_thousand_nested_arrays_are_a_400_not_a_500(engine):
    server, host, port = running(engine, WorkerLimits())  # 1 MiB: the body fits
    try:
        status, _, payload = send(host, port, b"[" * 100_000 + b"]" * 100_000)
        nested_field = b'{"query": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
        field_status, _, _ = send(host, port, nested_field)
    finally:
        server.shutdown()
        server.server_close()
    assert status == 400 and "nested too deeply" in payload["error"]
    assert field_status == 400


def test_a_body_over_the_limit_is_a_413_before_it_is_read(worker):
    status, _, payload = send(*worker, b"x" * 5000)
    assert status == 413 and "4096 bytes" in payload["error"]


def test_a_body_without_a_length_is_a_411(worker):
    host, port = worker
    with socket.create_connection((host, port), timeout=10) as sock:
        sock.sendall(
            b"POST /retrieve HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n"
        )
        sock.sendall(b"2\r\n{}\r\n0\r\n\r\n")
        reply = sock.recv(65536).decode()
    assert reply.startswith("HTTP/1.1 411")


def test_a_body_that_never_arrives_is_a_408(worker):
    host, port = worker
    with socket.create_connection((host, port), timeout=10) as sock:
        sock.sendall(
            b"POST /retrieve HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: 100\r\n\r\n{}"
        )
        started = time.monotonic()
        reply = sock.recv(65536).decode()
    assert reply.startswith("HTTP/1.1 408")
    assert time.monotonic() - started < 5


def test_a_saturated_worker_answers_503_with_retry_after(engine, monkeypatch):
    release = threading.Event()
    real_answer = query.serve.worker.answer

    def held_answer(request, eng):  # stands for a slow retrieval: holds until released
        release.wait(30)
        return real_answer(request, eng)

    monkeypatch.setattr(query.serve.worker, "answer", held_answer)
    server, host, port = running(engine, WorkerLimits(threads=1, max_pending=2))
    body = json.dumps(QUERY).encode()
    try:
        with ThreadPoolExecutor(max_workers=2) as pool:
            held = [pool.submit(send, host, port, body) for _ in range(2)]
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                if json.loads(_get(host, port, "/health"))["in_flight"] == 2:
                    break
                time.sleep(0.05)
            status, headers, payload = send(host, port, body)
            release.set()
            assert [f.result()[0] for f in held] == [200, 200]
    finally:
        release.set()
        server.shutdown()
        server.server_close()
    assert status == 503 and headers["Retry-After"] == "1"
    assert payload["error"].startswith("busy")


def _get(host: str, port: int, path: str) -> bytes:
    conn = http.client.HTTPConnection(host, port, timeout=10)
    try:
        conn.request("GET", path)
        return conn.getresponse().read()
    finally:
        conn.close()
