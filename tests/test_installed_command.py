"""`rag-retrieve` installed from a clone the way a user installs it, used from another folder.

The clone's files (as they are in the working tree) are copied to a temporary folder and
installed, not editable, with no extras and no extra index, from the package registries the
machine's installers are configured with, by each of the two tool installers a README reader
uses: pip into a fresh virtual environment (what `pipx install` does) and `uv tool install`
(uv from PATH, or else installed from PyPI into a virtual environment of the test's own).
Then, from a project folder that is not the clone, the command ingests, reports, answers and
prints an agent's MCP config, with the user's data folder (XDG_DATA_HOME) and config folder
(XDG_CONFIG_HOME) temporary.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.clone import copy_clone
from tests.support.paths import ROOT

pytestmark = pytest.mark.slow

SAMPLE = ROOT / "data" / "sample" / "tripkit_py"
INSTALL_TIMEOUT_S = 1800
COMMAND_TIMEOUT_S = 600
INSTALLERS = ("pip", "uv")


def _installer_env() -> dict[str, str]:
    env = dict(os.environ)
    # The tests' own XDG_CACHE_HOME would hide pip's and uv's caches: everything would
    # download again.
    env.pop("XDG_CACHE_HOME", None)
    return env


def _pip_install(clone: Path, base: Path) -> Path:
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", str(clone)],
        env=_installer_env(),
        check=True,
        timeout=INSTALL_TIMEOUT_S,
    )
    return venv / "bin" / "rag-retrieve"


def _uv(base: Path) -> Path:
    """uv from PATH, or else from PyPI into a virtual environment of its own."""
    found = shutil.which("uv")
    if found:
        return Path(found)
    tools = base / "uv-venv"
    subprocess.run([sys.executable, "-m", "venv", str(tools)], check=True)
    got = subprocess.run(
        [str(tools / "bin" / "python"), "-m", "pip", "install", "--quiet", "uv"],
        env=_installer_env(),
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT_S,
    )
    if got.returncode != 0:
        pytest.skip(f"uv is not on PATH and pip cannot install it: {got.stderr.strip()[-300:]}")
    return tools / "bin" / "uv"


def _uv_tool_install(clone: Path, base: Path) -> Path:
    env = _installer_env() | {
        "UV_TOOL_DIR": str(base / "uv-tools"),
        "UV_TOOL_BIN_DIR": str(base / "uv-bin"),
    }
    subprocess.run(
        [str(_uv(base)), "tool", "install", "--quiet", "--python", sys.executable, str(clone)],
        env=env,
        check=True,
        timeout=INSTALL_TIMEOUT_S,
    )
    return base / "uv-bin" / "rag-retrieve"


@pytest.fixture(scope="module", params=INSTALLERS)
def installed(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The `rag-retrieve` command as the installer put it."""
    base = tmp_path_factory.mktemp(f"install-{request.param}")
    clone = copy_clone(base / "rag-retrieve")
    install = _pip_install if request.param == "pip" else _uv_tool_install
    command = install(clone, base)
    shutil.rmtree(clone)  # the installed command must not need the clone any more
    return command


@pytest.fixture(scope="module")
def user(installed: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A user's project folder and their (temporary) data and config folders, one per
    installed command."""
    base = tmp_path_factory.mktemp("user")
    folders = {name: base / name for name in ("project", "share", "config")}
    for folder in folders.values():
        folder.mkdir()
    return folders


def _run(
    command: Path, user: dict[str, Path], *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    environ = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("RAG_", "TIDB_", "PREFECT_API_URL", "VIRTUAL_ENV", "PYTHONPATH"))
    }
    environ |= {
        "XDG_DATA_HOME": str(user["share"]),
        "XDG_CONFIG_HOME": str(user["config"]),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        **(env or {}),
    }
    return subprocess.run(
        [str(command), *args],
        cwd=user["project"],
        env=environ,
        capture_output=True,
        text=True,
        timeout=COMMAND_TIMEOUT_S,
    )


@pytest.fixture(scope="module")
def ingested(installed: Path, user: dict[str, Path]) -> Path:
    done = _run(installed, user, "ingest", str(SAMPLE), "--index", "tripkit")
    assert done.returncode == 0, done.stderr
    return installed


def test_the_index_lands_in_the_user_data_folder(ingested: Path, user: dict[str, Path]):
    assert (user["share"] / "rag-retrieve" / "indexes" / "tripkit.sqlite").is_file()
    assert not (user["project"] / "data").exists()


def test_status_lists_the_index_from_any_folder(ingested: Path, user: dict[str, Path]):
    done = _run(ingested, user, "status", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["indexes"]["tripkit"]["chunks"] > 0


def test_a_question_is_answered_with_the_files_of_the_folder(ingested: Path, user: dict[str, Path]):
    done = _run(ingested, user, "great-circle distance between two points", "--json")
    assert done.returncode == 0, done.stderr
    paths = [chunk["path"] for chunk in json.loads(done.stdout)["chunks"]]
    assert paths and paths[0].endswith("tripkit_py/geo.py")


def test_the_printed_mcp_config_starts_the_installed_command(
    installed: Path, user: dict[str, Path]
):
    done = _run(installed, user, "mcp", "--print-config", "mcp-json")
    assert done.returncode == 0, done.stderr
    server = json.loads(done.stdout)["mcpServers"]["rag-retrieve"]
    # The script in the tool's own environment: pipx and uv put a link to it on PATH.
    assert Path(server["command"]).is_absolute()
    assert Path(server["command"]).resolve() == installed.resolve()
    assert server["args"][:3] == ["mcp", "--store", str(user["share"] / "rag-retrieve/indexes")]


def test_doctor_names_the_config_file_and_the_variable_that_set_values(
    installed: Path, user: dict[str, Path]
):
    config = user["config"] / "rag-retrieve" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("corag_max_hops = 2\nrrf_k = 30\n")
    try:
        done = _run(installed, user, "doctor", "--json", env={"RAG_RRF_K": "7"})
    finally:
        config.unlink()
    sources = {row["variable"]: row for row in json.loads(done.stdout)["settings"]}
    assert sources["RAG_CORAG_MAX_HOPS"]["source"] == str(config)
    assert sources["RAG_RRF_K"]["value"] == "7"
    assert sources["RAG_RRF_K"]["source"] == f"environment variable RAG_RRF_K (over {config})"
