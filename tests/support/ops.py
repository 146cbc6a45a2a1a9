"""Helpers of the operations tests: one real `prefect server start` on a loopback port and
one `python -m flows.serve` per test session (both slow to start), and small corpus builders.

Servers are shared through `shared_server`/`shared_serve`, which start on first use and stop
when pytest finishes, whichever test module asks first."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support import paths
from tests.support.paths import ROOT

FIXTURES = paths.FIXTURES / "ops"
START_TIMEOUT_S = 90.0
FINAL_STATES = {"COMPLETED", "FAILED", "CRASHED", "CANCELLED"}


@dataclass
class PrefectServer:
    url: str  # the API, http://127.0.0.1:PORT/api
    ui: str
    home: Path
    process: subprocess.Popen

    def env(self) -> dict[str, str]:
        """Environment of a process that talks to this server."""
        return {
            "PREFECT_API_URL": self.url,
            "PREFECT_HOME": str(self.home),
            "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
            "DO_NOT_TRACK": "1",
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
        }


@dataclass
class Served:
    """A running `python -m flows.serve` and the directories its runs write to."""

    server: PrefectServer
    work: Path
    process: subprocess.Popen
    log: Path

    @property
    def index_dir(self) -> Path:
        return self.work / "indexes"


_SHARED: dict[str, Any] = {}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until(check, timeout: float, what: str, log: Path | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.5)
    tail = log.read_text(errors="replace")[-3000:] if log and log.exists() else ""
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}\n{tail}")


def _healthy(url: str) -> bool:
    try:
        return httpx.get(f"{url}/health", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def start_server(home: Path) -> PrefectServer:
    port = free_port()
    url = f"http://127.0.0.1:{port}/api"
    log = home / "server.log"
    env = {
        **os.environ,
        "PREFECT_HOME": str(home),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        # The UI learns the API's address from these, not from the --host/--port flags.
        "PREFECT_SERVER_API_HOST": "127.0.0.1",
        "PREFECT_SERVER_API_PORT": str(port),
        "PREFECT_UI_API_URL": url,
    }
    env.pop("PREFECT_API_URL", None)
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "prefect", "server", "start", "--host", "127.0.0.1"]
            + ["--port", str(port), "--no-scheduler", "--no-late-runs", "--analytics-off"],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=home,
        )
    server = PrefectServer(url, f"http://127.0.0.1:{port}", home, process)
    wait_until(lambda: _healthy(url), START_TIMEOUT_S, "prefect server start", log)
    return server


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def shared_server(config: pytest.Config) -> PrefectServer:
    if "server" not in _SHARED:
        home = Path(tempfile.mkdtemp(prefix="ops-prefect-"))
        server = start_server(home)
        _SHARED["server"] = server
        config.add_cleanup(lambda: (stop(server.process), shutil.rmtree(home, True)))
    return _SHARED["server"]


def shared_serve(config: pytest.Config) -> Served:
    """`python -m flows.serve` with a corpora file of one tiny corpus (tests/fixtures/ops)."""
    if "serve" not in _SHARED:
        server = shared_server(config)
        work = Path(tempfile.mkdtemp(prefix="ops-serve-"))
        corpus = copy_fixture("docs", work / "corpus")
        corpora = write_corpora(
            work / "corpora.toml",
            corpus_block("ops-docs", corpus, "ops", reverify_schedule="30 3 * * 0"),
        )
        log = work / "serve.log"
        env = {**os.environ, **server.env(), **rag_env(work), "RAG_CORPORA_FILE": str(corpora)}
        env["PREFECT_RUNNER_POLL_FREQUENCY"] = "2"  # pick up triggered runs quickly
        with log.open("wb") as out:
            process = subprocess.Popen(
                [sys.executable, "-m", "flows.serve", "--limit", "4"],
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=ROOT,
            )
        served = Served(server, work, process, log)
        _SHARED["serve"] = served
        config.add_cleanup(lambda: (stop(process), shutil.rmtree(work, True)))
        wait_until(
            lambda: process.poll() is not None or _has_deployments(server.url),
            START_TIMEOUT_S,
            "python -m flows.serve to register its deployments",
            log,
        )
        assert process.poll() is None, log.read_text(errors="replace")[-3000:]
    return _SHARED["serve"]


def _has_deployments(url: str) -> bool:
    response = httpx.post(f"{url}/deployments/filter", json={}, timeout=5)
    names = {d["name"] for d in response.json()}
    return {"refresh", "backfill", "reverify"} <= names


def rag_env(work: Path) -> dict[str, str]:
    """Settings that keep a run's indexes, staging and rejects inside `work`."""
    return {
        "RAG_DATA_DIR": str(work),
        "RAG_INDEX_DIR": str(work / "indexes"),
        "RAG_STAGING_DIR": str(work / "staging"),
    }


@contextmanager
def prefect_api(server: PrefectServer) -> Iterator[None]:
    """In-process flow runs report to `server` for the duration of the block."""
    from prefect.settings import PREFECT_API_URL, PREFECT_HOME, temporary_settings

    with temporary_settings(updates={PREFECT_API_URL: server.url, PREFECT_HOME: server.home}):
        yield


def copy_fixture(name: str, target: Path) -> Path:
    """A private copy of tests/fixtures/ops/<name> that a test may change."""
    shutil.copytree(FIXTURES / name, target)
    return target


def corpus_block(name: str, path: Path, index: str, **extra: Any) -> str:
    values = {"paths": [str(path)], "index": index, "refresh_schedule": "0 2 * * *", **extra}
    # JSON strings, lists and integers are valid TOML values.
    return f"[corpora.{name}]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in values.items())


def write_corpora(path: Path, *blocks: str) -> Path:
    path.write_text("\n".join(blocks), encoding="utf-8")
    return path


def wait_for_runs(server: PrefectServer, run_ids: list[Any], timeout: float) -> list[dict]:
    """The flow runs, once every one of them is in a final state."""
    finished: dict[str, dict[str, Any]] = {}

    def done() -> bool:
        for run_id in map(str, run_ids):
            run = httpx.get(f"{server.url}/flow_runs/{run_id}", timeout=10).json()
            if run["state_type"] in FINAL_STATES:
                finished[run_id] = run
        return len(finished) == len(run_ids)

    wait_until(done, timeout, f"flow runs {run_ids} to finish")
    return [finished[str(run_id)] for run_id in run_ids]


def read_run_artifacts(server: PrefectServer, flow_run_id: Any) -> list[dict[str, Any]]:
    response = httpx.post(
        f"{server.url}/artifacts/filter",
        json={"artifacts": {"flow_run_id": {"any_": [str(flow_run_id)]}}},
        timeout=10,
    )
    response.raise_for_status()
    return response.json()
