"""Stops Prefect's temporary API server when the ingest that started it dies.

Run by flows.api_server as `python -I -S api_guard.py SERVER_PID MARK` with a pipe on stdin.
"done" on stdin: the owner stopped the server itself; leave. End of file without it: the
owner died (SIGKILL included); stop the server if that pid still runs it. Standard library
only and no site-packages, so that it starts in milliseconds.
"""

import os
import signal
import sys
import time


def runs_server(pid: int, mark: str) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return mark.encode() in handle.read()
    except FileNotFoundError:
        # No /proc (macOS): trust the pid, alive only for as long as the owner lived.
        return not os.path.isdir("/proc") and alive(pid)
    except OSError:
        return False


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True


def main() -> None:
    pid, mark = int(sys.argv[1]), sys.argv[2]
    if sys.stdin.buffer.read().startswith(b"done"):
        return
    if not runs_server(pid, mark):
        return
    os.kill(pid, signal.SIGTERM)
    for _ in range(50):
        time.sleep(0.1)
        if not alive(pid):
            return
    os.kill(pid, signal.SIGKILL)


if __name__ == "__main__":
    main()
