"""`python -m query mcp` as a subprocess, driven by the MCP SDK's own client over stdio and
over streamable HTTP: the tools and their schemas, retrieve with and without a version
filter, the CLI's messages as tool errors, concurrent calls, status, and ingest behind
--allow-ingest (under the deployments' index lock)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from prefect.client.orchestration import get_client

from flows.index_lock import limit_name
from query.cli.main import main as query_cli
from query.retrieval.pipeline import answer, make_request
from tests.support.ops import free_port, prefect_api, shared_server, wait_until
from tests.support.query import FIXTURES, BuiltStores, build_stores, shared_engine

pytestmark = pytest.mark.slow

# The documents of tests/fixtures/query the version filter must drop or keep (as in
# test_query_e2e.py).
OBSERVABLE_MACRO = "documentation/observation/observable()"  # iOS 17.0+
APP_WINDOWS = "documentation/uikit/uiapplication/windows"  # deprecated in iOS 15.0
OBSERVABLE_OBJECT = "documentation/combine/observableobject"
SCENE_WINDOWS = "documentation/uikit/uiwindowscene/windows"
NAVIGATION_VIEW = "documentation/swiftui/navigationview"  # deprecated in iOS 16.0
NAVIGATION_STACK = "documentation/swiftui/navigationstack"
WINDOWS_QUERY = "observe model changes and find the key window"
NAVIGATION_QUERY = "push views on a navigation stack"
CONCURRENT = [
    {"query": NAVIGATION_QUERY, "ios_version": "26.0"},
    {"query": "save trips with SwiftData", "frameworks": ["CloudKit"]},
    {"query": "run tasks concurrently", "domain": "python"},
    {"query": "find the key window", "top_k": 3},
]
NAVIGATION_TOOLS = ["find_symbol", "find_references", "call_graph"]
CALL_TIMEOUT_S = 180.0  # the first call waits for the server's model to load


def server_env(tmp: Path) -> dict[str, str]:
    """The child's whole environment: offline models, every path of ours inside `tmp`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAG_", "PREFECT_API"))}
    env.update(
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        RAG_DATA_DIR=str(tmp / "data"),
        RAG_INDEX_DIR=str(tmp / "indexes"),
        RAG_STAGING_DIR=str(tmp / "staging"),
    )
    return env


def stdio_transport(args: list[str], tmp: Path, env: dict[str, str] | None = None):
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "query", "mcp", *args],
        env=env or server_env(tmp),
        cwd=str(tmp),
    )
    return stdio_client(params, errlog=(tmp / "server.log").open("a"))


async def session(server: Any) -> dict[str, Any]:
    """One client session's calls; the results by name."""
    out: dict[str, Any] = {}
    with anyio.fail_after(CALL_TIMEOUT_S):
        async with Client(server) as client:
            out["tools"] = {t.name: t for t in (await client.list_tools()).tools}
            calls = {
                "windows": {"query": WINDOWS_QUERY, "top_k": 20},
                "windows_15": {"query": WINDOWS_QUERY, "top_k": 20, "ios_version": "15.0"},
                "navigation_26": {"query": NAVIGATION_QUERY, "top_k": 20, "ios_version": "26.0"},
                "bad_version": {"query": "q", "ios_version": "17.x"},
                "bad_top_k": {"query": "q", "top_k": 0},
                "bad_corag": {"query": "q", "use_corag": "yes"},
                "bad_index": {"query": "q", "indexes": ["nope"]},
            }
            for name, arguments in calls.items():
                out[name] = await client.call_tool("retrieve", arguments)
            results: list[Any] = [None] * 8

            async def call(slot: int) -> None:
                results[slot] = await client.call_tool("retrieve", CONCURRENT[slot % 4])

            async with anyio.create_task_group() as group:
                for slot in range(8):
                    group.start_soon(call, slot)
            out["concurrent"] = results
            out["list_indexes"] = await client.call_tool("list_indexes", {})
            out["index_status"] = await client.call_tool("index_status", {"index": "app"})
            out["bad_status"] = await client.call_tool("index_status", {"index": "nope"})
    return out


@pytest.fixture(scope="module")
def stores(tmp_path_factory) -> BuiltStores:
    return build_stores(tmp_path_factory.getbasetemp() / "query-stores")


@pytest.fixture(scope="module")
def over_stdio(stores, tmp_path_factory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("mcp-stdio")
    return anyio.run(session, stdio_transport(["--store", str(stores.main)], tmp))


@pytest.fixture(scope="module")
def http_url(stores, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("mcp-http")
    port = free_port()
    log = tmp / "server.log"
    command = [sys.executable, "-m", "query", "mcp", "--http", "--port", str(port)]
    with log.open("wb") as out:
        server = subprocess.Popen(
            [*command, "--store", str(stores.main)],
            env=server_env(tmp),
            cwd=tmp,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: server.poll() is not None or _healthy(url), 60, "the MCP server", log)
        assert server.poll() is None, log.read_text()
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)


def _healthy(url: str) -> bool:
    try:
        return httpx.get(f"{url}/health", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


@pytest.fixture(scope="module")
def over_http(http_url) -> dict[str, Any]:
    return anyio.run(session, f"{http_url}/mcp")


@pytest.fixture(params=["stdio", "http"])
def results(request) -> dict[str, Any]:
    return request.getfixturevalue(f"over_{request.param}")


def paths(result) -> list[str]:
    assert not result.is_error, result.content
    return [chunk["path"] for chunk in result.structured_content["chunks"]]


def error_text(result) -> str:
    assert result.is_error and result.structured_content is None
    return result.content[0].text


def cli_error(argv: list[str], capsys) -> str:
    """What `python -m query` prints for the same mistake (after "error: ")."""
    assert query_cli(argv) == 2
    return capsys.readouterr().err.strip().removeprefix("error: ")


def test_the_tools_and_their_schemas(results):
    tools = results["tools"]
    assert set(tools) == {
        "retrieve",
        "list_indexes",
        "index_status",
        *NAVIGATION_TOOLS,
    }  # no ingest
    retrieve = tools["retrieve"]
    assert list(retrieve.input_schema["properties"]) == [
        "query",
        "domain",
        "ios_version",
        "frameworks",
        "top_k",
        "use_corag",
        "user_codebase",
        "indexes",
        "max_tokens",
    ]
    assert retrieve.input_schema["required"] == ["query"]
    assert retrieve.input_schema["properties"]["top_k"]["default"] == 10
    assert all(p["description"] for p in retrieve.input_schema["properties"].values())
    assert all(f"- {name}:" in retrieve.description for name in ("ios_version", "use_corag"))
    assert set(retrieve.output_schema["properties"]) == {
        "chunks",
        "total_tokens",
        "query_expansions",
        "corag_trace",
        "notes",
    }
    assert retrieve.annotations.read_only_hint


def test_the_version_filter_holds(results):
    assert {OBSERVABLE_MACRO, APP_WINDOWS} <= set(paths(results["windows"]))
    ios15 = paths(results["windows_15"])
    assert OBSERVABLE_MACRO not in ios15 and APP_WINDOWS not in ios15
    assert {OBSERVABLE_OBJECT, SCENE_WINDOWS} <= set(ios15)
    ios26 = paths(results["navigation_26"])
    assert NAVIGATION_VIEW not in ios26 and NAVIGATION_STACK in ios26


def test_retrieve_returns_what_the_pipeline_answers(results, stores):
    engine = shared_engine(stores)
    expected = answer(make_request({"query": WINDOWS_QUERY, "top_k": 20}), engine).to_dict()
    got = results["windows"].structured_content
    assert [c["chunk_id"] for c in got["chunks"]] == [c["chunk_id"] for c in expected["chunks"]]
    assert [set(c) for c in got["chunks"]] == [set(c) for c in expected["chunks"]]
    assert got["total_tokens"] == expected["total_tokens"]
    assert got["query_expansions"] == [WINDOWS_QUERY] and got["corag_trace"] is None
    assert got["notes"] == expected["notes"]
    # The text content carries the same, for hosts that read no structured content.
    assert json.loads(results["windows"].content[0].text) == got


def test_bad_arguments_are_tool_errors_with_the_cli_messages(results, stores, capsys):
    store = ["--store", str(stores.main)]
    version = cli_error(["q", "--ios-version", "17.x", *store], capsys)
    assert version.startswith("malformed ios_version")
    assert error_text(results["bad_version"]).endswith(version)
    top_k = cli_error(["q", "--top-k", "0", *store], capsys)
    assert error_text(results["bad_top_k"]).endswith(top_k)
    index = cli_error(["q", "--index", "nope", *store], capsys)
    assert error_text(results["bad_index"]).endswith(index)
    assert "unknown index 'nope' (available: app, docs)" in index
    # The CLI has no such value to give; the message names the tool's argument.
    assert error_text(results["bad_corag"]).endswith("use_corag must be true or false, got 'yes'")


def test_concurrent_calls_all_succeed_with_the_sequential_answers(results, stores):
    engine = shared_engine(stores)
    expected = [
        [c["chunk_id"] for c in answer(make_request(fields), engine).chunks]
        for fields in CONCURRENT
    ]
    for slot, result in enumerate(results["concurrent"]):
        assert not result.is_error, result.content
        chunks = result.structured_content["chunks"]
        assert [c["chunk_id"] for c in chunks] == expected[slot % 4]


def test_list_indexes_and_index_status(results, stores):
    model = shared_engine(stores).model_id()
    listed = results["list_indexes"].structured_content
    assert listed == {"store": str(stores.main), "query_model": model, "indexes": ["app", "docs"]}
    status = results["index_status"].structured_content
    assert list(status["indexes"]) == ["app"] and status["query_model"] == model
    app = status["indexes"]["app"]
    assert app["health"] == "ok" and app["model_id"] == model
    assert app["chunks"] == app["vectors"] > 0
    # The server's own paths: it keeps the postings warm, as the worker does.
    assert (app["keyword_path"], app["vector_path"]) == ("postings", "exact")
    assert error_text(results["bad_status"]).endswith("unknown index 'nope' (available: app, docs)")


def test_over_http_the_same_process_answers_as_the_worker(http_url, stores):
    health = httpx.get(f"{http_url}/health", timeout=10).json()
    assert health["store"] == str(stores.main) and health["indexes"] == ["app", "docs"]
    body = {"query": NAVIGATION_QUERY, "ios_version": "26.0", "top_k": 20}
    answered = httpx.post(f"{http_url}/retrieve", json=body, timeout=60).json()
    assert NAVIGATION_VIEW not in [c["path"] for c in answered["chunks"]]


def test_stdout_carries_nothing_but_the_protocol(stores, tmp_path):
    """Raw JSON-RPC over the pipes, through the model's load: every stdout line is a message."""
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "retrieve", "arguments": {"query": NAVIGATION_QUERY}},
        },
    ]
    server = subprocess.Popen(
        [sys.executable, "-m", "query", "mcp", "--store", str(stores.main)],
        env=server_env(tmp_path),
        cwd=tmp_path,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=(tmp_path / "server.log").open("wb"),
    )
    assert server.stdin is not None and server.stdout is not None
    lines = []
    try:
        server.stdin.write("".join(json.dumps(m) + "\n" for m in messages).encode())
        server.stdin.flush()
        while not any(json.loads(line).get("id") == 2 for line in lines):
            line = server.stdout.readline()
            assert line, "the server closed stdout before answering"
            lines.append(line)
    finally:
        server.stdin.close()
        rest = server.stdout.read()
        server.wait(timeout=30)
    lines += rest.splitlines(keepends=True)
    decoded = [json.loads(line) for line in lines]  # a stray print would fail here
    assert all(m["jsonrpc"] == "2.0" for m in decoded)
    answer_ = next(m for m in decoded if m.get("id") == 2)
    assert answer_["result"]["structuredContent"]["chunks"]
    assert server.returncode == 0


def test_ingest_only_with_allow_ingest_and_under_the_index_lock(pytestconfig, tmp_path):
    prefect = shared_server(pytestconfig)
    code = tmp_path / "code"
    shutil.copytree(FIXTURES / "app", code)
    (tmp_path / "store").mkdir()
    env = {**server_env(tmp_path), **prefect.env()}
    args = ["--store", str(tmp_path / "store"), "--allow-ingest", str(tmp_path)]
    args += ["--index", "mcp-code"]

    async def drive() -> dict[str, Any]:
        out: dict[str, Any] = {}
        with anyio.fail_after(CALL_TIMEOUT_S):
            async with Client(stdio_transport(args, tmp_path, env)) as client:
                out["tools"] = [t.name for t in (await client.list_tools()).tools]
                out["before"] = await client.call_tool("list_indexes", {})
                out["ingest"] = await client.call_tool("ingest", {"paths": ["code"]})
                out["found"] = await client.call_tool("retrieve", {"query": "TripStore"})
                out["missing"] = await client.call_tool("ingest", {"paths": ["nothere"]})
                # The vectors follow in the background while the server answers.
                while True:
                    status = await client.call_tool("index_status", {"index": "mcp-code"})
                    out["status"] = status.structured_content
                    covered = out["status"]["indexes"]["mcp-code"]["vector_coverage"] == 1.0
                    if covered and not out["status"]["embedding"]:
                        break
                    await anyio.sleep(0.2)
        return out

    out = anyio.run(drive)
    assert out["tools"] == ["retrieve", "list_indexes", "index_status", *NAVIGATION_TOOLS, "ingest"]
    assert out["before"].structured_content["indexes"] == []
    ingested = out["ingest"].structured_content
    assert ingested["index"] == "mcp-code" and ingested["rejected"] == []
    assert (ingested["summary"]["docs_new"], ingested["summary"]["docs_rejected"]) == (2, 0)
    assert ingested["breakdowns"]["chunks_by_language"] == {
        "swift": ingested["summary"]["chunks_written"]
    }
    # It returned once the files were keyword-searchable; the rest ran in the background.
    assert ingested["summary"]["chunks_pending"] == ingested["summary"]["chunks_written"]
    assert "being embedded in the background" in ingested["embedding"]
    assert "TripStore.swift" in paths(out["found"])
    assert out["status"]["indexes"]["mcp-code"]["chunks_pending"] == 0
    assert error_text(out["missing"]).endswith("nothere: no such file or directory")
    with prefect_api(prefect), get_client(sync_client=True) as client:
        limit = client.read_global_concurrency_limit_by_name(limit_name("mcp-code"))
    assert (limit.limit, limit.active_slots) == (1, 0)


def test_ingest_reads_only_under_the_allowed_folders_and_never_credentials(pytestconfig, tmp_path):
    prefect = shared_server(pytestconfig)
    root = tmp_path / "project"
    shutil.copytree(FIXTURES / "app", root / "app")
    (root / ".ssh").mkdir()
    (root / ".ssh" / "notes.md").write_text("# Keys\n\nThe deploy key opens prod-bastion.\n")
    (root / ".env").write_text("API_KEY=fake-key-for-tests\n")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "private.md").write_text("# Private\n\nNot for the index.\n")
    (root / "escape").symlink_to(outside, target_is_directory=True)
    (tmp_path / "store").mkdir()
    env = {**server_env(tmp_path), **prefect.env()}
    args = ["--store", str(tmp_path / "store"), "--allow-ingest", str(root), "--index", "mine"]

    async def drive() -> dict[str, Any]:
        out: dict[str, Any] = {}
        with anyio.fail_after(CALL_TIMEOUT_S):
            async with Client(stdio_transport(args, tmp_path, env)) as client:
                out["outside"] = await client.call_tool("ingest", {"paths": [str(outside)]})
                out["dotdot"] = await client.call_tool(
                    "ingest", {"paths": ["project/../elsewhere"]}
                )
                out["symlink"] = await client.call_tool("ingest", {"paths": ["project/escape"]})
                out["glob"] = await client.call_tool("ingest", {"paths": ["project/escape/*.md"]})
                out["root"] = await client.call_tool("ingest", {"paths": ["project"]})
                out["keys"] = await client.call_tool("retrieve", {"query": "deploy key bastion"})
        return out

    out = anyio.run(drive)
    for refused in ("outside", "dotdot", "symlink", "glob"):
        message = error_text(out[refused])
        assert "outside the folders this server may ingest" in message, refused
        assert str(root) in message, refused
    ingested = out["root"].structured_content
    skipped = ingested["breakdowns"]["skipped_by_type"]
    assert skipped["credentials: .ssh/"] == 1 and skipped["credentials: .env"] == 1
    assert "notes.md" not in paths(out["keys"]) and "private.md" not in paths(out["keys"])


def test_a_root_that_holds_the_home_folder_is_refused(tmp_path, capsys):
    assert query_cli(["mcp", "--store", str(tmp_path), "--allow-ingest", "/"]) == 2
    assert "holds the whole home folder" in capsys.readouterr().err
