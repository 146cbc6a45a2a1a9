"""Our processes never import a user's project: started in a folder whose packages share our
packages' names (`core/`, `query/`, `flows/`, `loaders/`, `chunkers/`, `sql/`, each of which
leaves a mark and exits if imported), the MCP server as a printed config starts it, its
ingest and watch children, the worker `--serve-if-absent` starts and the analysis child of a
load all run our code, and none of those packages is imported."""

from __future__ import annotations

import json
import os
import shutil
import signal
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from core.store.sqlite.analysis_process import MIN_OFFLOAD_CHARS, AnalysisProcess, analyse_all
from query.cli.main import main as query_cli
from query.serve import worker_file
from query.serve.client import start_worker
from tests.query.test_mcp_server import server_env
from tests.support.ops import shared_server
from tests.support.query import FIXTURES

OUR_PACKAGES = ("core", "query", "flows", "loaders", "chunkers", "sql")
TRAP = """import pathlib, sys
pathlib.Path(__file__).resolve().parents[1].joinpath("IMPORTED-{name}").write_text(repr(sys.argv))
sys.exit("the project's own {name} package was imported")
"""
CALL_TIMEOUT_S = 300.0  # the model's load and the first ingest, on a busy box


def plant_traps(folder: Path) -> Path:
    """`folder` with packages named like ours, each leaving a mark if imported."""
    for name in OUR_PACKAGES:
        (folder / name).mkdir(parents=True)
        (folder / name / "__init__.py").write_text(TRAP.format(name=name))
    return folder


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A user's project whose packages are named like ours."""
    return plant_traps(tmp_path / "project")


def imported(project: Path) -> list[str]:
    return sorted(path.name for path in project.glob("IMPORTED-*"))


def test_the_analysis_child_runs_ours_from_a_project_folder(project, monkeypatch):
    monkeypatch.chdir(project)
    contents = ["func archive(trips: [Trip]) -> URL { nightsBetween(start, end) }"] * 5000
    assert sum(map(len, contents)) >= MIN_OFFLOAD_CHARS
    contexts = [None] * len(contents)
    analysis = AnalysisProcess()
    try:
        bodies = analysis.submit(contexts, contents)()
        child = analysis.pid
    finally:
        analysis.close()
    assert child is not None  # the child answered: it was not given up on
    assert bodies == analyse_all(contexts, contents)
    assert imported(project) == []


@pytest.mark.slow
def test_the_printed_server_and_its_children_import_nothing_from_the_project(
    tmp_path, project, monkeypatch, capsys, pytestconfig
):
    code = project / "app"
    shutil.copytree(FIXTURES / "app", code)
    store = tmp_path / "store"
    store.mkdir()
    monkeypatch.chdir(project)
    flags = ["--store", str(store), "--index", "watched", "--allow-ingest", "app", "--watch", "app"]
    assert query_cli(["mcp", *flags, "--print-config", "mcp-json"]) == 0
    server = json.loads(capsys.readouterr().out)["mcpServers"]["rag-retrieve"]
    env = {**server_env(tmp_path), **shared_server(pytestconfig).env(), **server["env"]}
    params = StdioServerParameters(
        command=server["command"], args=server["args"], env=env, cwd=str(project)
    )

    async def session() -> dict[str, Any]:
        out: dict[str, Any] = {}
        log = (tmp_path / "server.log").open("a")
        with anyio.fail_after(CALL_TIMEOUT_S):
            async with Client(stdio_client(params, errlog=log)) as client:
                while not out.get("watch", {}).get("runs"):
                    status = await client.call_tool("index_status", {"index": "watched"})
                    out["watch"] = {} if status.is_error else status.structured_content["watch"]
                    await anyio.sleep(0.2)
                arguments = {"paths": ["app/TripStore.swift"], "index": "ingested"}
                ingested = await client.call_tool("ingest", arguments)
                out["ingest"] = ingested.structured_content
                found = await client.call_tool("retrieve", {"query": "trips", "top_k": 3})
                out["retrieve"] = found.structured_content
        return out

    out = anyio.run(session)
    assert out["watch"]["last_run"]["docs_new"] == 2  # the watch child indexed the project
    assert out["ingest"]["summary"]["chunks_written"] > 0  # so did the ingest child
    assert out["retrieve"]["chunks"]
    assert imported(project) == []


@pytest.mark.slow
def test_a_worker_started_from_a_project_folder_runs_ours(tmp_path, project, monkeypatch):
    store = tmp_path / "store"
    store.mkdir()
    monkeypatch.chdir(project)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    url, pid = start_worker(str(store))
    try:
        assert worker_file.read(store).url == url  # it came up, and proved it
        assert imported(project) == []
    finally:
        os.kill(pid, signal.SIGTERM)
