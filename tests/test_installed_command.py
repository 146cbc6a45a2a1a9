"""`rag-retrieve` installed from a clone the way a user installs it, used from another folder.

The clone's files (as they are in the working tree) are copied to a temporary folder and
installed, not editable, into a fresh virtual environment with pip, the torch pin as a
constraint (the CPU build; an open range pulls CUDA), from the package registries and pip's
cache: no model is downloaded, the packaged one is used. Then, from a project folder that is
not the clone, the command ingests, reports, answers and prints an agent's MCP config, with
the user's data folder (XDG_DATA_HOME) and config folder (XDG_CONFIG_HOME) temporary.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import ROOT

pytestmark = pytest.mark.slow

SAMPLE = ROOT / "data" / "sample" / "tripkit_py"
INSTALL_TIMEOUT_S = 1800
COMMAND_TIMEOUT_S = 600


def _tracked_files() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout
    return [Path(name) for name in listed.decode().split("\0") if name]


def _copy_clone(target: Path) -> Path:
    """The clone's files, so that pip's build writes its build/ and egg-info there."""
    for relative in _tracked_files():
        source = ROOT / relative
        if source.is_file():
            (target / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / relative)
    return target


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The `rag-retrieve` script of a fresh virtual environment."""
    base = tmp_path_factory.mktemp("install")
    clone = _copy_clone(base / "rag-retrieve")
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    constraints = base / "constraints.txt"
    constraints.write_text("torch==2.13.0\n")
    env = dict(os.environ)
    # The tests' own XDG_CACHE_HOME would hide pip's cache: everything would download again.
    env.pop("XDG_CACHE_HOME", None)
    subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "-c", str(constraints)]
        + [f"{clone}[torch]"],
        env=env,
        check=True,
        timeout=INSTALL_TIMEOUT_S,
    )
    shutil.rmtree(clone)  # the installed command must not need the clone any more
    return venv / "bin" / "rag-retrieve"


@pytest.fixture(scope="module")
def user(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A user's project folder and their (temporary) data and config folders."""
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
    assert server["command"] == str(installed)
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
