"""Prefect's temporary API server for one CLI run: started on our terms, never left behind.

Without a configured `PREFECT_API_URL`, Prefect starts a local API server (uvicorn) in a
subprocess the first time a flow runs, and stops it from an `atexit` hook. A run killed
with SIGKILL never reaches that hook, and the server (~200 MB, a loopback port) lives on
with parent 1. So the CLI starts that server itself, before the flow:

- with its own start-up limit (`RAG_PREFECT_STARTUP_TIMEOUT_S`; Prefect's 20 s is too tight
  on a busy 2-core laptop) and Prefect's telemetry off unless asked for;
- with a guard: a tiny process that holds the read end of a pipe whose write end only this
  process has. Any death of ours, SIGKILL included, closes the pipe; the guard then stops
  the server. A clean exit tells the guard to leave quietly;
- after reaping stragglers: servers started by earlier runs whose owner is gone (marked
  through their environment, which they inherit from us; read with psutil);
- while the run prepares (`while_starting`): the server's process spends its ~10 s of
  start-up on a core of its own while ours fetches and loads the model.

Prefect's client finds the running server through its own singleton, so the flow uses it.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psutil

from core.settings import Settings

OWNER_VARIABLE = "RAG_PREFECT_SERVER_OWNER"
SAFE_PATH_VARIABLE = "PYTHONSAFEPATH"
SERVER_MARK = "prefect.server.api.server:create_app"
GUARD = Path(__file__).with_name("guard.py")


class ApiServerError(RuntimeError):
    """Prefect's temporary API server did not start; the message says how to give it longer."""


@contextlib.contextmanager
def temporary_api_server(
    settings: Settings, while_starting: Callable[[], object] | None = None
) -> Iterator[str | None]:
    """Start Prefect's temporary server (guarded) unless an API is configured; yields its
    URL, or None when Prefect talks to a configured server.

    `while_starting()` is the run's own slow preparation (fetching and loading the model):
    it runs here, in this thread, while the server's process starts (about 10 s on a
    2-core laptop, most of it importing), instead of after. When it raises, the server is
    stopped once its start has ended, and the error is the run's."""
    from prefect.logging.configuration import ensure_logging_setup
    from prefect.settings import PREFECT_API_URL

    # Prefect's logging is set up when its flow machinery is imported, which may now happen
    # during `while_starting`: the start's line and the preparation's would go unseen.
    ensure_logging_setup()
    if PREFECT_API_URL.value():  # from the environment or the active Prefect profile
        _prepare(while_starting)
        yield None
        return
    reap_stragglers()
    _child_environment(settings)
    from prefect.server.api.server import SubprocessASGIServer

    server = SubprocessASGIServer()
    guard = None
    try:
        # start() starts the process, then polls its health until it answers: the other
        # thread mostly waits. It reads Prefect's settings from the context, hence the copy.
        # Leaving the block waits for the start to end, also when `while_starting` raised:
        # stopping a server whose start is under way would race that start.
        with ThreadPoolExecutor(1, thread_name_prefix="prefect-api-start") as starting:
            started = starting.submit(
                contextvars.copy_context().run,
                server.start,
                int(settings.prefect_startup_timeout_s),
            )
            _prepare(while_starting)
        failed = started.exception()
        if isinstance(failed, RuntimeError):
            raise ApiServerError(
                f"Prefect's temporary API server did not start within "
                f"{settings.prefect_startup_timeout_s:.0f} s (RAG_PREFECT_STARTUP_TIMEOUT_S); "
                f"a busy machine may need longer, or set PREFECT_API_URL to a running server. "
                f"{str(failed)[:300]}"
            ) from None
        if failed is not None:
            raise failed
        assert server.server_process is not None
        guard = _start_guard(server.server_process.pid)
        yield server.api_url
    finally:
        _drain_logs()
        server.stop()
        if guard is not None:
            _release(guard)


def _prepare(while_starting: Callable[[], object] | None) -> None:
    from prefect.settings import PREFECT_LOGGING_TO_API_WHEN_MISSING_FLOW, temporary_settings

    if while_starting is None:
        return
    # Outside any flow run: its log lines (the model's fetch and load) are the console's;
    # sent to the API, Prefect would refuse each with a warning.
    with temporary_settings({PREFECT_LOGGING_TO_API_WHEN_MISSING_FLOW: "ignore"}):
        while_starting()


def _drain_logs() -> None:
    # Logs still queued for the API go first: sent after the stop they fail, and Prefect
    # retries and reports each failure at exit.
    from prefect.logging.handlers import APILogWorker

    with contextlib.suppress(Exception):
        APILogWorker.drain_all(timeout=10)


def _child_environment(settings: Settings) -> None:
    # Prefect builds the server's environment from ours (subprocess.Popen(env=os.environ...)),
    # so this is where its settings and our ownership mark must go.
    os.environ[OWNER_VARIABLE] = str(os.getpid())
    # Prefect starts it as `python -m uvicorn` in our working directory, the user's project:
    # the equivalent of -P (core/own_command.py) keeps a `uvicorn/` or `prefect/` there from
    # being imported in its place.
    os.environ[SAFE_PATH_VARIABLE] = "1"
    if not settings.prefect_telemetry:
        os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
        os.environ.setdefault("DO_NOT_TRACK", "1")


def _start_guard(server_pid: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-I", str(GUARD), str(server_pid), SERVER_MARK],
        stdin=subprocess.PIPE,
        # Its own session: a Ctrl-C or a kill of our process group must not take the guard
        # down before it has done its work.
        start_new_session=True,
    )


def _release(guard: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(OSError, ValueError):
        assert guard.stdin is not None
        guard.stdin.write(b"done\n")
        guard.stdin.close()
    with contextlib.suppress(subprocess.TimeoutExpired):
        guard.wait(timeout=5)


def reap_stragglers() -> list[int]:
    """SIGTERM every Prefect temporary server started by one of our runs that has died;
    returns their pids. psutil reads other processes' command lines and environments on
    Linux and macOS alike (a /proc scan found nothing on the Macs our users run)."""
    reaped: list[int] = []
    for process in psutil.process_iter(["pid", "cmdline"]):
        if SERVER_MARK not in " ".join(process.info["cmdline"] or ()):
            continue
        owner = _owner(process)
        if owner is not None and not psutil.pid_exists(owner):
            with contextlib.suppress(psutil.Error):
                process.terminate()
                reaped.append(process.pid)
    return reaped


def _owner(process: psutil.Process) -> int | None:
    """The pid of the run that started this server (from the mark in its environment)."""
    try:
        value = process.environ().get(OWNER_VARIABLE, "")
    except psutil.Error:  # gone, or another user's
        return None
    return int(value) if value.isdigit() else None
