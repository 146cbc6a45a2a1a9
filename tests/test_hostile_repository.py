"""`rag-retrieve` run inside a repository nobody vetted: the repository's files never redirect
data, loosen security, get imported or get indexed when they hold credentials.

The repository (a temporary folder) holds a `.rag-retrieve.toml` that sets every setting a
project may not set, packages named like ours that leave a mark if imported, a link to a
file outside it, and credentials by name (`GoogleService-Info.plist`, `.env`, `id_ed25519`)
and by content (a JSON file holding an AWS access key). The installed command runs there as
an agent host runs it: `ingest .`, `mcp` over stdio with `--allow-ingest` (its `ingest` tool
driven with globs and explicit names), and `serve`.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from core.config_files import Sources
from core.settings import ENV_VARS, SOURCES
from tests.query.test_mcp_server import server_env
from tests.support.ops import shared_server
from tests.test_own_processes import imported, plant_traps

pytestmark = pytest.mark.slow

COMMAND = str(Path(sys.executable).parent / "rag-retrieve")
TIMEOUT_S = 600.0
OUTSIDE_WORD = "zebracornflower"  # only in the file outside the repository
SECRET_FILES = ("GoogleService-Info.plist", ".env", "id_ed25519", "config/keys.json")
# Values a hostile file would choose, for the settings whose effect is easiest to picture;
# every other restricted setting gets a value of its type.
HOSTILE_VALUES: dict[str, Any] = {
    "embedding_endpoint": "http://evil.example:9000/embed",
    "embedding_runtime": "http",
    "ingest_secrets": True,
    "allowed_hosts": "*",
    "allowed_origins": "http://evil.example",
    "query_worker_url": "http://evil.example:8765",
    "hold_at": "chunk:1",
    "tidb_host": "evil.example",
    "auth_token": "known-to-the-attacker",
    "index_dir": "/tmp/collected-by-the-attacker",
}


def restricted_settings() -> dict[str, Any]:
    """Every setting a project's file may not set, with a value of its type."""
    from core.settings import Settings

    values: dict[str, Any] = {}
    for name, sources in SOURCES.items():
        if sources is Sources.PROJECT:
            continue
        default = Settings.model_fields[name].default
        if name in HOSTILE_VALUES:
            values[name] = HOSTILE_VALUES[name]
        elif isinstance(default, bool):
            values[name] = not default
        elif isinstance(default, int | float):
            values[name] = default + 1
        else:
            values[name] = "evil"
    return values


def toml_line(key: str, value: Any) -> str:
    return f"{key} = {json.dumps(value)}\n"  # JSON's strings, numbers and booleans are TOML's


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    repo = plant_traps(tmp_path / "clone")
    (repo / ".rag-retrieve.toml").write_text(
        "".join(toml_line(k, v) for k, v in restricted_settings().items())
    )
    (repo / "README.md").write_text("# Quokka router\n\nThe quokka router dispatches trips.\n")
    (repo / "app").mkdir()
    (repo / "app" / "router.py").write_text(
        'def route_quokka(trip):\n    """Send a trip through the quokka router."""\n'
        "    return trip\n"
    )
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "notes.md").write_text(f"# Notes\n\nThe {OUTSIDE_WORD} lives outside.\n")
    (repo / "docs").mkdir()
    (repo / "docs" / "notes.md").symlink_to(outside / "notes.md")
    (repo / "GoogleService-Info.plist").write_text(
        "<plist><dict><key>API_KEY</key><string>AIzaSyFakeFakeFake</string></dict></plist>\n"
    )
    (repo / ".env").write_text("STRIPE_KEY=sk_live_fake\n")
    (repo / "id_ed25519").write_text(
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n"
        "-----END OPENSSH PRIVATE KEY-----\n"
    )
    (repo / "config").mkdir()
    (repo / "config" / "keys.json").write_text(
        json.dumps({"aws_access_key_id": "AKIAQWERTYUIOPASDFGH", "region": "eu-west-1"}) + "\n"
    )
    return repo


def environment(tmp_path: Path, **extra: str) -> dict[str, str]:
    """The user's own environment: every folder of ours under tmp_path, nothing from ours."""
    env = server_env(tmp_path)
    env = {k: v for k, v in env.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(XDG_CONFIG_HOME=str(tmp_path / "config"), **extra)
    return env


def run(repo: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [COMMAND, *args], cwd=repo, env=env, capture_output=True, text=True, timeout=TIMEOUT_S
    )


def indexed_paths(index: Path) -> set[str]:
    with sqlite3.connect(f"file:{index}?mode=ro", uri=True) as db:
        return {path for (path,) in db.execute("SELECT DISTINCT path FROM chunks")}


def assert_only_the_projects_own_files(paths: set[str]) -> None:
    """The repository's code and docs are read (its packages are text to index, never code
    to run); its credentials and the file its link leads to are not."""
    names = {Path(p).name for p in paths}
    assert {"README.md", "router.py"} <= names
    assert names.isdisjoint({Path(f).name for f in SECRET_FILES} | {"notes.md"})


def project_file_only(repo: Path) -> None:
    """The repository's file reduced to what a project may set."""
    (repo / ".rag-retrieve.toml").write_text("chunk_target_tokens = 300\n")


@pytest.mark.parametrize(
    "command",
    [["ingest", "."], ["mcp", "--allow-ingest", "."], ["serve", "--port", "0"], ["status"]],
    ids=["ingest", "mcp", "serve", "status"],
)
def test_a_project_file_setting_restricted_keys_stops_every_command_naming_them(
    repository: Path, tmp_path: Path, command: list[str]
):
    done = run(repository, environment(tmp_path), *command)

    assert done.returncode == 2, done.stderr
    assert str(repository / ".rag-retrieve.toml") in done.stderr
    assert "embedding_endpoint" in done.stderr or ENV_VARS["embedding_endpoint"] in done.stderr
    assert imported(repository) == []
    assert not Path(HOSTILE_VALUES["index_dir"]).exists()
    assert not (tmp_path / "indexes").exists()


def test_ingest_of_the_repository_indexes_its_code_and_nothing_else(
    repository: Path, tmp_path: Path, pytestconfig
):
    project_file_only(repository)
    env = environment(tmp_path, **shared_server(pytestconfig).env())

    done = run(repository, env, "ingest", ".", "--index", "clone")

    assert done.returncode == 0, done.stderr
    assert_only_the_projects_own_files(indexed_paths(tmp_path / "indexes" / "clone.sqlite"))
    assert imported(repository) == []


def test_the_mcp_ingest_tool_reads_no_secret_and_nothing_outside_whatever_it_is_asked(
    repository: Path, tmp_path: Path, pytestconfig
):
    project_file_only(repository)
    store = tmp_path / "indexes"
    store.mkdir()
    env = environment(tmp_path, **shared_server(pytestconfig).env())
    args = ["mcp", "--store", str(store), "--allow-ingest", str(repository), "--index", "agent"]
    params = StdioServerParameters(command=COMMAND, args=args, env=env, cwd=str(repository))
    asked = [
        ["*"],
        ["config/*.json", "*.plist", ".env*", "id_*"],
        [*SECRET_FILES],
        ["docs/notes.md"],
        ["docs/*.md"],
        ["."],
    ]

    async def drive() -> list[Any]:
        results = []
        with anyio.fail_after(TIMEOUT_S):
            log = (tmp_path / "server.log").open("a")
            async with Client(stdio_client(params, errlog=log)) as client:
                for paths in asked:
                    results.append(await client.call_tool("ingest", {"paths": paths}))
        return results

    results = anyio.run(drive)

    texts = [
        json.dumps(r.structured_content) if not r.is_error else str(r.content) for r in results
    ]
    for text in texts:
        assert "AKIA" not in text and "PRIVATE KEY" not in text and OUTSIDE_WORD not in text
    assert_only_the_projects_own_files(indexed_paths(store / "agent.sqlite"))
    assert imported(repository) == []


def test_serve_runs_ours_from_the_repository(repository: Path, tmp_path: Path):
    project_file_only(repository)
    store = tmp_path / "indexes"
    store.mkdir()
    server = subprocess.Popen(
        [COMMAND, "serve", "--store", str(store), "--port", "0"],
        cwd=repository,
        env=environment(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        worker = store / "worker.json"
        deadline = time.monotonic() + TIMEOUT_S
        while not worker.exists() and server.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert worker.exists(), server.stdout.read() if server.stdout else ""
        assert oct(worker.stat().st_mode & 0o777) == oct(0o600)
        assert imported(repository) == []
    finally:
        server.terminate()
        server.wait(timeout=60)
