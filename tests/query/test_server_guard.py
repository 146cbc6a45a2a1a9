"""Only the user's own tools reach a local server: one guard in front of every route of
`serve` and `mcp --http` checks the Host (DNS rebinding), the Origin (a web page in the
user's browser), the content type of /retrieve, and a bearer token when one is set.

The servers here are real (uvicorn on a loopback port, the MCP SDK's streamable HTTP app)
around an engine of test doubles: what is under test is who gets an answer, not the answer.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from importlib.metadata import version
from pathlib import Path

import httpx
import pytest

from core.settings import Settings
from query.errors import UsageError
from query.mcp.server import MCP_PATH, build_server, http_app
from query.serve.guard import Access, read_token_file
from query.serve.worker import WorkerLimits, create_app
from tests.support.paths import ROOT
from tests.support.query import FakeIndex, fake_engine, row, worker_serving

TOKEN = "s3cret-token-for-tests"
LOCAL = "127.0.0.1"
QUESTION = {"query": "save trips"}


def engine():
    return fake_engine(FakeIndex("docs", [row("c1", "save trips with SwiftData")]))


@pytest.fixture(params=["serve", "mcp --http"])
def server(request) -> Iterator[tuple[str, str]]:
    """(the kind, its URL), without a token."""
    yield from running(request.param, Access.for_server("127.0.0.1", Settings()))


@pytest.fixture(params=["serve", "mcp --http"])
def token_server(request) -> Iterator[tuple[str, str]]:
    yield from running(request.param, Access.for_server("127.0.0.1", Settings(), TOKEN))


def running(kind: str, access: Access) -> Iterator[tuple[str, str]]:
    the_engine = engine()
    app = None
    if kind == "mcp --http":
        app = http_app(build_server(the_engine), create_app(the_engine, WorkerLimits()))
    with worker_serving(the_engine, access=access, app=app) as url:
        yield kind, url


def ask(url: str, path: str, **kwargs) -> httpx.Response:
    method = kwargs.pop("method", "POST" if path in ("/retrieve", MCP_PATH) else "GET")
    if method == "POST" and "content" not in kwargs and "json" not in kwargs:
        kwargs["json"] = QUESTION if path == "/retrieve" else INITIALIZE
    return httpx.request(method, url + path, timeout=30, **kwargs)


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "guard-test", "version": "1"},
    },
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


def routes(kind: str) -> list[str]:
    return ["/health", "/retrieve", "/live"] + ([MCP_PATH] if kind == "mcp --http" else [])


def test_loopback_requests_are_answered(server):
    kind, url = server
    assert ask(url, "/health").status_code == 200
    assert ask(url, "/retrieve").status_code == 200
    assert ask(url, "/live").json() == {"status": "ok"}


def test_a_foreign_host_is_refused_on_every_route(server):
    kind, url = server
    for path in routes(kind):
        answer = ask(url, path, headers={"Host": "evil.example:8799", **MCP_HEADERS})
        assert answer.status_code == 421, path
        assert "evil.example" in answer.json()["error"]
        assert "RAG_ALLOWED_HOSTS" in answer.json()["error"]  # the way to allow a name


def test_localhost_with_and_without_a_port_is_a_loopback_host_on_every_route(server):
    kind, url = server
    for path in routes(kind):
        for host in ("localhost", "localhost:8765", "127.0.0.1", "[::1]:8765"):
            answer = ask(url, path, headers={"Host": host, **MCP_HEADERS})
            assert answer.status_code == 200, (path, host)


def test_a_foreign_origin_is_refused_even_with_a_loopback_host(server):
    kind, url = server
    for path in routes(kind):
        answer = ask(url, path, headers={"Origin": "http://evil.example:8799", **MCP_HEADERS})
        assert answer.status_code == 403, path


def test_no_cors_headers_are_sent(server):
    kind, url = server
    answer = ask(url, "/health")
    assert not [h for h in answer.headers if h.lower().startswith("access-control-")]


def test_a_text_plain_body_is_refused_with_415(server):
    kind, url = server
    answer = ask(
        url, "/retrieve", content=json.dumps(QUESTION), headers={"Content-Type": "text/plain"}
    )
    assert answer.status_code == 415
    assert "application/json" in answer.json()["error"]
    if kind == "mcp --http":
        text_plain = {"Content-Type": "text/plain", **MCP_HEADERS}
        answer = ask(url, MCP_PATH, content=json.dumps(INITIALIZE), headers=text_plain)
        assert answer.status_code == 415
        assert "application/json" in answer.json()["error"]


@pytest.mark.parametrize("kind", ["serve", "mcp --http"])
def test_an_allowed_origin_is_answered_on_every_route(kind):
    settings = Settings(allowed_origins="https://tools.example")
    for _, url in running(kind, Access.for_server("127.0.0.1", settings)):
        for path in routes(kind):
            answer = ask(url, path, headers={"Origin": "https://tools.example", **MCP_HEADERS})
            assert answer.status_code == 200, path


@pytest.mark.parametrize("kind", ["serve", "mcp --http"])
def test_an_allowed_host_is_answered_on_every_route_and_others_still_refused(kind):
    settings = Settings(allowed_hosts="rag.internal")
    for _, url in running(kind, Access.for_server("127.0.0.1", settings)):
        for path in routes(kind):
            answer = ask(url, path, headers={"Host": "rag.internal:8765", **MCP_HEADERS})
            assert answer.status_code == 200, path
            answer = ask(url, path, headers={"Host": "evil.example", **MCP_HEADERS})
            assert answer.status_code == 421, path


def test_any_host_without_a_token_is_refused_before_serving():
    with pytest.raises(UsageError, match=r"RAG_ALLOWED_HOSTS='\*'.*RAG_AUTH_TOKEN"):
        Access.for_server("127.0.0.1", Settings(allowed_hosts="*"))


@pytest.mark.parametrize("kind", ["serve", "mcp --http"])
def test_any_host_with_a_token_answers_a_foreign_host_that_holds_the_token(kind):
    access = Access.for_server("127.0.0.1", Settings(allowed_hosts="*"), TOKEN)
    for _, url in running(kind, access):
        for path in routes(kind):
            foreign = {"Host": "rag.example.org", **MCP_HEADERS}
            if path != "/live":
                assert ask(url, path, headers=foreign).status_code == 401, path
            auth = {"Authorization": f"Bearer {TOKEN}", **foreign}
            assert ask(url, path, headers=auth).status_code == 200, path


def test_with_a_token_a_request_without_it_is_refused(token_server):
    kind, url = token_server
    for path in routes(kind):
        if path == "/live":
            continue
        answer = ask(url, path, headers=MCP_HEADERS)
        assert answer.status_code == 401, path
        assert answer.headers["www-authenticate"].startswith("Bearer")


def test_with_a_token_a_wrong_token_is_refused(token_server):
    kind, url = token_server
    answer = ask(url, "/retrieve", headers={"Authorization": "Bearer not-the-token"})
    assert answer.status_code == 401


def test_with_a_token_the_right_token_is_answered(token_server):
    kind, url = token_server
    auth = {"Authorization": f"Bearer {TOKEN}"}
    assert ask(url, "/retrieve", headers=auth).status_code == 200
    assert ask(url, "/health", headers=auth).status_code == 200
    if kind == "mcp --http":
        answer = ask(url, MCP_PATH, headers={**auth, **MCP_HEADERS})
        assert answer.status_code == 200


def test_the_liveness_probe_needs_no_token(token_server):
    kind, url = token_server
    assert ask(url, "/live").json() == {"status": "ok"}


def test_the_mcp_server_reports_the_package_version():
    for _, url in running("mcp --http", Access.for_server("127.0.0.1", Settings())):
        text = ask(url, MCP_PATH, headers=MCP_HEADERS).text
        payload = json.loads(text[text.index("{") :].splitlines()[0])
        assert payload["result"]["serverInfo"]["version"] == version("rag-retrieve")


def test_a_token_file_readable_by_others_is_refused(tmp_path: Path):
    path = tmp_path / "token"
    path.write_text(TOKEN)
    path.chmod(0o644)
    with pytest.raises(Exception, match="chmod 600"):
        read_token_file(path)
    path.chmod(0o600)
    assert read_token_file(path) == TOKEN


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k != "RAG_AUTH_TOKEN"}
    return subprocess.run(
        [sys.executable, "-m", "query", *args],
        cwd=ROOT,
        env={**environment, **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("command", [["serve"], ["mcp", "--http"]])
def test_any_host_without_a_token_exits_2_with_the_reason(command, tmp_path):
    done = cli(*command, "--port", "0", "--store", str(tmp_path), env={"RAG_ALLOWED_HOSTS": "*"})
    assert done.returncode == 2
    assert "RAG_ALLOWED_HOSTS='*'" in done.stderr and "RAG_AUTH_TOKEN" in done.stderr


@pytest.mark.parametrize("command", [["serve"], ["mcp", "--http"]])
def test_binding_beyond_loopback_without_a_token_exits_2_with_the_reason(command, tmp_path):
    done = cli(*command, "--host", "0.0.0.0", "--port", "0", "--store", str(tmp_path))
    assert done.returncode == 2
    assert "--host 0.0.0.0" in done.stderr and "RAG_AUTH_TOKEN" in done.stderr


def test_a_tidb_password_never_leaves_the_server():
    the_engine = engine()
    the_engine.store.location = "tidb://rag:hunter2@db.internal:4000/rag"
    access = Access.for_server(LOCAL, Settings())
    with worker_serving(the_engine, access=access) as url:
        health = ask(url, "/health")
        answer = ask(url, "/retrieve", json={"query": "q", "store": "tidb://x:y@elsewhere/db"})
    assert "hunter2" not in health.text and "db.internal" in health.json()["store"]
    assert "hunter2" not in answer.text
