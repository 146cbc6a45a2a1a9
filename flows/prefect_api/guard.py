"""Stops Prefect's temporary API server when the ingest that started it dies.

Run by flows.prefect_api.server as `python -I guard.py SERVER_PID MARK` with a pipe on stdin.
"done" on stdin: the owner stopped the server itself; leave. End of file without it: the
owner died (SIGKILL included); stop the server if that pid still runs it. Nothing of ours is
imported, so that it starts in tens of milliseconds; psutil reads the server's command line
on Linux and macOS alike.
"""

import sys

import psutil


def runs_server(pid: int, mark: str) -> bool:
    """Whether `pid` is still the server (not a process that took its pid since)."""
    try:
        return mark in " ".join(psutil.Process(pid).cmdline())
    except psutil.Error:
        return False


def main() -> None:
    pid, mark = int(sys.argv[1]), sys.argv[2]
    if sys.stdin.buffer.read().startswith(b"done"):
        return
    if not runs_server(pid, mark):
        return
    server = psutil.Process(pid)
    server.terminate()
    try:
        server.wait(timeout=5)
    except psutil.TimeoutExpired:
        server.kill()
    except psutil.NoSuchProcess:
        pass


if __name__ == "__main__":
    main()
