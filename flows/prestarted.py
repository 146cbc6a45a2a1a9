"""`python -m flows.prestarted`: an ingest or embed command whose interpreter started, and
imported Prefect and the ingest stack, before the command was known.

The MCP server's ingest tool runs one `flows.ingest` child per call. Such a child spends
about 5 s of a 7 s call on the same work every time: the interpreter, then Prefect and the
flows' imports (3 s of CPU on two cores), all before it reads a file. The server keeps one of
these processes waiting (query/mcp/prestarted.py), so a call pays only for its own run; it
starts the next one while nothing waits for it. A process per command, not a warm worker
that runs flows in turn or forks them: each run keeps a process of its own, so a crash or a
leak ends with it, and no fork follows the imports (forking a process that loaded Apple's
frameworks is unsafe on macOS, where our users run).

Protocol: after its imports it reads one JSON line on stdin, `{"module": "flows.ingest" or
"flows.embed", "argv": [ARG...]}`, and runs that command's `main(argv)` as `python -m MODULE
ARG...` would, with stdout and stderr as that command's (JSON lines with `--json`), exiting
with its status. End of file instead of a line (the server stopped first): it exits 0. A line
it cannot take: an error on stderr, exit 2.
"""

from __future__ import annotations

import importlib
import json
import os
import sys

# The commands it may run: the ones the MCP server runs.
COMMANDS = ("flows.ingest", "flows.embed")
# What those commands import on their way to their first file, measured in a run of the
# ingest tool (`-X importtime`, and the modules a run adds to sys.modules): Prefect's engine
# and client and our flows and loaders. Not the model runtimes: `--vectors later` loads none,
# and an embed child loads the one its settings name.
PRELOAD = (
    "flows.ingest",
    "flows.ingest_run",
    "flows.ingest_flow",
    "flows.embed",
    "flows.embed_flow",
    "flows.prefect_api.server",
    "loaders.ingest",
    "loaders.run",
    "chunkers.sources.discovery",
    "chunkers.sources.reading",
    "core.store.open",
    "prefect.flow_engine",
    "prefect.task_engine",
    "prefect.client.orchestration",
)
EXIT_USAGE = 2


class RequestError(ValueError):
    """A request line this process cannot run."""


def read_request(line: str) -> tuple[str, list[str]]:
    """(module, argv) from a request line."""
    try:
        request = json.loads(line)
    except json.JSONDecodeError as exc:
        raise RequestError(f"request is not JSON: {exc.msg}") from None
    if not isinstance(request, dict):
        raise RequestError("request must be a JSON object")
    module, argv = request.get("module"), request.get("argv")
    if module not in COMMANDS:
        raise RequestError(f"module must be one of {', '.join(COMMANDS)}, not {module!r}")
    if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
        raise RequestError("argv must be a list of strings")
    return module, argv


def main() -> int:
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:
            # Prefect's module layout is Prefect's: one that moved costs its import time,
            # not the command, which imports what it needs itself and says what is missing.
            continue
    line = sys.stdin.readline()
    if not line.strip():
        return 0
    try:
        module, argv = read_request(line)
    except RequestError as exc:
        print(f"error: flows.prestarted: {exc}", file=sys.stderr)
        return EXIT_USAGE
    # The command's stdin is nobody's, as a child the server starts cold has none.
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    from flows.ingest_run import command_started_now

    command_started_now()
    command = importlib.import_module(module)
    sys.argv = [str(command.__file__), *argv]
    return int(command.main(argv))


if __name__ == "__main__":
    sys.exit(main())
