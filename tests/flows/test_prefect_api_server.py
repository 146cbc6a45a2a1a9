"""Prefect's temporary API server starts while the run prepares (fetches and loads its
model) rather than before it, and a preparation that fails stops the server: no process is
left behind. Real Prefect: the slow tests start a server each (seconds)."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import subprocess
import time
import warnings

import httpx
import psutil
import pytest
from prefect.logging.handlers import APILogHandler
from prefect.settings import (
    PREFECT_API_URL,
    PREFECT_LOGGING_TO_API_WHEN_MISSING_FLOW,
    temporary_settings,
)

from core.own_command import python_module
from core.settings import Settings
from flows.prefect_api.server import GUARD, SERVER_MARK, temporary_api_server


@pytest.fixture
def no_server_yet() -> None:
    """A test before may have left Prefect's own temporary server running in this process
    (a task run outside a flow starts one), and there would be nothing left to start."""
    from prefect.server.api.server import SubprocessASGIServer

    for server in list(SubprocessASGIServer._instances.values()):
        server.stop()


def ours(mark: str) -> set[psutil.Process]:
    """This process's children with `mark` in their command line (the server's guard has the
    server's mark among its arguments: it is found by its own)."""
    found = set()
    for child in psutil.Process().children():
        try:
            command = " ".join(child.cmdline())
            if mark in command and (mark == str(GUARD) or str(GUARD) not in command):
                found.add(child)
        except psutil.NoSuchProcess:
            pass
    return found


def starting_server(before: set[psutil.Process]) -> psutil.Process:
    """The server process started since `before`, waited for a few seconds."""
    deadline = time.monotonic() + 10
    while not (new := ours(SERVER_MARK) - before):
        assert time.monotonic() < deadline, "no server process was started"
        time.sleep(0.05)
    return new.pop()


def answers(server: psutil.Process) -> bool:
    command = server.cmdline()
    port = command[command.index("--port") + 1]
    try:
        return httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=2).status_code == 200
    except httpx.TransportError:
        return False


@pytest.mark.slow
def test_the_run_prepares_while_the_server_starts(no_server_yet):
    before = ours(SERVER_MARK)
    seen: list[bool] = []

    def prepare() -> None:
        seen.append(answers(starting_server(before)))

    with temporary_api_server(Settings.from_env(), while_starting=prepare) as url:
        assert httpx.get(f"{url}/health").status_code == 200

    assert seen == [False]  # the server's process was there, and not yet answering


@pytest.mark.slow
def test_a_failed_preparation_stops_the_server_and_is_the_runs_error(no_server_yet):
    before = ours(SERVER_MARK) | ours(str(GUARD))
    started: list[psutil.Process] = []

    def prepare() -> None:
        started.append(starting_server(before))
        raise RuntimeError("the model could not be fetched")

    with (
        pytest.raises(RuntimeError, match="could not be fetched"),
        temporary_api_server(Settings.from_env(), while_starting=prepare),
    ):
        pytest.fail("the run went on after its preparation failed")

    assert not started[0].is_running()
    assert ours(SERVER_MARK) | ours(str(GUARD)) == before


def test_the_preparations_log_lines_outside_a_flow_run_raise_no_warning():
    # Our loggers forward to the API as Prefect's extra loggers do, through its handler.
    handler = APILogHandler()
    preparing, after = (logging.getLogger(f"preparation-test.{n}") for n in ("preparing", "after"))
    for logger in (preparing, after):
        logger.addHandler(handler)
    configured = {
        PREFECT_API_URL: "http://127.0.0.1:9/api",  # configured: no server is started
        PREFECT_LOGGING_TO_API_WHEN_MISSING_FLOW: "warn",  # Prefect's default
    }
    try:
        with temporary_settings(configured), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with temporary_api_server(Settings(), lambda: preparing.warning("model loaded")):
                after.warning("no flow run here either")
    finally:
        for logger in (preparing, after):
            logger.removeHandler(handler)

    warned = [
        str(w.message).split("'")[1] for w in caught if "without a flow run" in str(w.message)
    ]
    assert warned == ["preparation-test.after"]


@pytest.mark.slow
def test_the_holder_keeps_a_server_for_its_parent_until_its_stdin_closes(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_API")}
    holder = subprocess.Popen(
        python_module("flows.prefect_api"), stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env
    )
    assert holder.stdout is not None and holder.stdin is not None
    url = json.loads(holder.stdout.readline())["api_url"]
    server = next(iter(ours_of(holder, SERVER_MARK)))

    assert httpx.get(f"{url}/health", timeout=5).status_code == 200
    holder.stdin.close()
    assert holder.wait(timeout=30) == 0
    assert not server.is_running()


def ours_of(parent: subprocess.Popen[bytes], mark: str) -> set[psutil.Process]:
    """The children of `parent` with `mark` in their command line (guards aside)."""
    found = set()
    for child in psutil.Process(parent.pid).children():
        with contextlib.suppress(psutil.NoSuchProcess):
            command = " ".join(child.cmdline())
            if mark in command and str(GUARD) not in command:
                found.add(child)
    return found
