"""Prefect's temporary API server is never left behind: a server whose owning run has died
is reaped by the next run, and the guard stops the server when its owner dies. Both find
the server through psutil, which reads command lines and environments on Linux and macOS."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import psutil
import pytest

from flows.prefect_api.server import GUARD, OWNER_VARIABLE, SERVER_MARK, reap_stragglers

# A process that looks like Prefect's server to the reaper: the mark in its command line.
FAKE_SERVER = ["-c", "import time; time.sleep(120)", SERVER_MARK]


def dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def fake_server(owner: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, OWNER_VARIABLE: str(owner)}
    return subprocess.Popen([sys.executable, *FAKE_SERVER], env=env)


def gone(process: subprocess.Popen[bytes], timeout: float = 10.0) -> bool:
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        return False
    return True


@pytest.fixture
def servers():
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for process in started:
        process.kill()
        process.wait()


def wait_for_environment(process: subprocess.Popen[bytes]) -> None:
    # The marked environment is readable once the interpreter is running.
    deadline = time.monotonic() + 10
    while OWNER_VARIABLE not in psutil.Process(process.pid).environ():
        assert time.monotonic() < deadline
        time.sleep(0.05)


def test_a_server_whose_run_died_is_reaped(servers):
    orphan = fake_server(owner=dead_pid())
    servers.append(orphan)
    wait_for_environment(orphan)

    reaped = reap_stragglers()

    assert orphan.pid in reaped
    assert gone(orphan)


def test_a_server_whose_run_lives_is_left_alone(servers):
    owned = fake_server(owner=os.getpid())
    servers.append(owned)
    wait_for_environment(owned)

    reaped = reap_stragglers()

    assert owned.pid not in reaped
    assert owned.poll() is None


def test_the_guard_stops_the_server_when_its_owner_dies(servers):
    server = fake_server(owner=os.getpid())
    servers.append(server)
    guard = subprocess.Popen(
        [sys.executable, "-I", str(GUARD), str(server.pid), SERVER_MARK], stdin=subprocess.PIPE
    )
    assert guard.stdin is not None
    guard.stdin.close()  # what the owner's death does to the pipe

    assert gone(guard)
    assert gone(server)


def test_the_guard_leaves_when_its_owner_says_done(servers):
    server = fake_server(owner=os.getpid())
    servers.append(server)
    guard = subprocess.Popen(
        [sys.executable, "-I", str(GUARD), str(server.pid), SERVER_MARK], stdin=subprocess.PIPE
    )
    guard.communicate(b"done\n", timeout=10)

    assert guard.returncode == 0
    assert server.poll() is None


def test_the_guard_spares_a_process_that_is_not_the_server(servers):
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    servers.append(other)
    guard = subprocess.Popen(
        [sys.executable, "-I", str(GUARD), str(other.pid), SERVER_MARK], stdin=subprocess.PIPE
    )
    assert guard.stdin is not None
    guard.stdin.close()

    assert gone(guard)
    assert other.poll() is None
