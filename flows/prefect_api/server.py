"""Prefect's temporary API server for one CLI run: started on our terms, never left behind.

Without a configured `PREFECT_API_URL`, Prefect starts a local API server (uvicorn) in a
subprocess the first time a flow runs, and stops it from an `atexit` hook. A run killed
with SIGKILL never reaches that hook, and the server (~200 MB, a loopback port) lives on
with parent 1. So the CLI starts that server itself, with the command line Prefect uses
(`SubprocessASGIServer`), before the flow:

- as the command's first act (`starting_api`): the server spends ~10 s importing and
  opening its database (~20 s on a fresh `~/.prefect`, which it migrates) on a core of its
  own while the command works. Prefect's own class is not imported for it: importing
  `prefect.server` costs our process 4-8 s of CPU for one Popen call;
- with its own start-up limit (`RAG_PREFECT_STARTUP_TIMEOUT_S`; Prefect's 20 s is too tight
  on a busy 2-core laptop) and Prefect's telemetry off unless asked for;
- with a guard: a tiny process that holds the read end of a pipe whose write end only this
  process has. Any death of ours, SIGKILL included, closes the pipe; the guard then stops
  the server. A clean exit tells the guard to leave quietly;
- after reaping stragglers: servers started by earlier runs whose owner is gone (marked
  through their environment, which they inherit from us; read with psutil).

The flow reaches the server through `PREFECT_API_URL` in a temporary settings context
(`ApiStart.wait`), as Prefect's own test harness does.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import psutil

from core.settings import Settings

OWNER_VARIABLE = "RAG_PREFECT_SERVER_OWNER"
SAFE_PATH_VARIABLE = "PYTHONSAFEPATH"
SERVER_MARK = "prefect.server.api.server:create_app"
GUARD = Path(__file__).with_name("guard.py")
# uvicorn's exit status when its port was taken between our choice and its bind.
PORT_TAKEN = 3
# Where Prefect may read a configured API from besides the environment.
PREFECT_CONFIG_FILES = ("prefect.toml", ".env", "pyproject.toml")


class ApiServerError(RuntimeError):
    """Prefect's temporary API server did not start; the message says how to give it longer."""


class ApiStart:
    """A temporary API server on its way up: started, not yet waited for."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.started = time.monotonic()
        self.port = _free_port()
        self.process = _launch(self.port, settings)
        self.guard = _start_guard(self.process.pid)
        self.ready_s: float | None = None  # seconds from the launch to its first answer

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api"

    def answers(self) -> bool:
        """Whether the server answers its health check now (no waiting)."""
        try:
            return httpx.get(f"{self.api_url}/health", timeout=1.0).status_code == 200
        except httpx.TransportError:
            return False

    def wait(self) -> str:
        """Block until the server answers; its API URL. ApiServerError when it does not
        within the settings' limit or its process ended."""
        limit = self.settings.prefect_startup_timeout_s
        while not self.answers():
            code = self.process.poll()
            if code == PORT_TAKEN:
                self._relaunch()
                continue
            if code is not None:
                raise ApiServerError(
                    f"Prefect's temporary API server exited with status {code} before it "
                    "answered (its error is above); set PREFECT_API_URL to a running server"
                )
            if time.monotonic() - self.started > limit:
                raise ApiServerError(
                    f"Prefect's temporary API server did not start within {limit:.0f} s "
                    "(RAG_PREFECT_STARTUP_TIMEOUT_S); a busy machine may need longer, or set "
                    "PREFECT_API_URL to a running server"
                )
            time.sleep(0.05)
        if self.ready_s is None:
            self.ready_s = round(time.monotonic() - self.started, 3)
        return self.api_url

    def _relaunch(self) -> None:
        _release(self.guard)
        self.port = _free_port()
        self.process = _launch(self.port, self.settings)
        self.guard = _start_guard(self.process.pid)

    def stop(self) -> None:
        _drain_logs()
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        _release(self.guard)


def api_configured(settings: Settings) -> bool:
    """Whether Prefect talks to a configured API (the environment, the active profile, a
    project's Prefect settings file) rather than a temporary server of ours.

    Answered without Prefect when it is not imported yet and nothing anywhere names an API:
    importing Prefect to ask takes 2.5 s, which would delay the server's start by as much.
    Once imported, Prefect is asked (its settings context may name one, as its test
    harness does)."""
    if settings.prefect_api_url:
        return True
    if "prefect.settings" not in sys.modules and not _may_name_api():
        return False
    from prefect.settings import PREFECT_API_URL

    return bool(PREFECT_API_URL.value())


def _may_name_api() -> bool:
    home = Path(os.environ.get("PREFECT_HOME") or Path.home() / ".prefect").expanduser()
    profiles = Path(os.environ.get("PREFECT_PROFILES_PATH") or home / "profiles.toml")
    for candidate in (profiles, *(Path(name) for name in PREFECT_CONFIG_FILES)):
        with contextlib.suppress(OSError):
            text = candidate.read_text(encoding="utf-8", errors="replace")
            if "API_URL" in text.upper():
                return True
    return "PREFECT_PROFILE" in os.environ


@contextlib.contextmanager
def starting_api(settings: Settings) -> Iterator[ApiStart | None]:
    """Start Prefect's temporary server (guarded) unless an API is configured, and yield at
    once: None when Prefect talks to a configured server, else the start, which the caller
    waits for (`ApiStart.wait`) when it first needs the API. The server is stopped on
    leaving, after the logs queued for it are sent."""
    if api_configured(settings):
        yield None
        return
    reap_stragglers()
    start = ApiStart(settings)
    try:
        yield start
    finally:
        start.stop()


@contextlib.contextmanager
def using_api(url: str) -> Iterator[None]:
    """Prefect's client talks to `url`, a temporary server of ours, inside the block."""
    from prefect.settings import PREFECT_API_URL, PREFECT_UI_URL, temporary_settings

    # No UI URL: the temporary server serves none, and a "View at" link would lead nowhere.
    with temporary_settings({PREFECT_API_URL: url, PREFECT_UI_URL: ""}):
        try:
            yield
        finally:
            # Logs still queued go now, to this API: sent once the block is left, they would
            # find no API configured, and Prefect would start a server of its own for them.
            _drain_logs()


@contextlib.contextmanager
def temporary_api_server(
    settings: Settings, while_starting: Callable[[], object] | None = None
) -> Iterator[str | None]:
    """Start Prefect's temporary server (guarded) unless an API is configured; yields its
    URL, or None when Prefect talks to a configured server.

    `while_starting()` is the run's own slow preparation (fetching and loading the model):
    it runs here, in this thread, while the server's process starts, instead of after. When
    it raises, the server is stopped, and the error is the run's."""
    with starting_api(settings) as start:
        prepare_beside(while_starting)
        if start is None:
            yield None
            return
        with using_api(start.wait()):
            yield start.api_url


def prepare_beside(while_starting: Callable[[], object] | None) -> None:
    """Run a command's preparation (fetching and loading the model, importing the flow)
    outside any flow run, with Prefect's console logging set up first: its lines and
    Prefect's own are seen, and none is sent to an API that has no run to file them under."""
    from prefect.logging.configuration import ensure_logging_setup
    from prefect.settings import PREFECT_LOGGING_TO_API_WHEN_MISSING_FLOW, temporary_settings

    # Prefect's logging is set up when its flow machinery is imported, which may now happen
    # during `while_starting`.
    ensure_logging_setup()
    if while_starting is None:
        return
    # Outside any flow run: its log lines (the model's fetch and load) are the console's;
    # sent to the API, Prefect would refuse each with a warning.
    with temporary_settings({PREFECT_LOGGING_TO_API_WHEN_MISSING_FLOW: "ignore"}):
        while_starting()


def _drain_logs() -> None:
    # Logs still queued for the API go first: sent after the stop they fail, and Prefect
    # retries and reports each failure at exit. Only when Prefect's logging is loaded.
    handlers = sys.modules.get("prefect.logging.handlers")
    if handlers is None:
        return
    with contextlib.suppress(Exception):
        handlers.APILogWorker.drain_all(timeout=10)


def _free_port() -> int:
    with contextlib.closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _launch(port: int, settings: Settings) -> subprocess.Popen[bytes]:
    """Prefect's temporary server as its `SubprocessASGIServer` starts it."""
    # The package's folder without importing it (2.5 s), for --app-dir.
    package = importlib.util.find_spec("prefect")
    assert package is not None and package.origin is not None
    environment = {
        **os.environ,
        # Prefect's marks for its temporary server: no UI, ephemeral services.
        "PREFECT_UI_ENABLED": "0",
        "PREFECT__SERVER_EPHEMERAL": "1",
        "PREFECT__SERVER_FINAL": "1",
        OWNER_VARIABLE: str(os.getpid()),
        # Started as `python -m uvicorn` in the user's project: the equivalent of -P
        # (core/own_command.py) keeps a `uvicorn/` or `prefect/` there from being imported.
        SAFE_PATH_VARIABLE: "1",
    }
    if not settings.prefect_telemetry:
        environment.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
        environment.setdefault("DO_NOT_TRACK", "1")
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvicorn",
            "--app-dir",
            str(Path(package.origin).parent.parent),
            "--factory",
            SERVER_MARK,
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--log-level",
            "error",
            "--lifespan",
            "on",
        ],  # fmt: skip
        env=environment,
    )


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
