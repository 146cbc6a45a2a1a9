"""The command line that starts one of our own processes, never from the working directory.

`python -m MODULE` puts the working directory first on sys.path. Our children run in the
user's project folder (the MCP server an agent host starts there, its ingest and watch
children, the worker `--serve-if-absent` starts, the analysis child of a load), and a
project may well hold packages named like ours (`core/`, `query/`, `flows/`, `sql/`, ...)
or like our dependencies': their code would run instead of ours. So every child is this
interpreter with `-P` (Python 3.11: prepend no unsafe path; PYTHONPATH is still honoured),
and every command line printed for an agent host is the installed `rag-retrieve` script
(a script's sys.path starts at its own folder) or, without one, that same `-P` form.

A person typing `python -m query` in such a folder still imports from it: that command is
theirs; these are ours.
"""

from __future__ import annotations

import sys
from pathlib import Path

SAFE_PATH = "-P"
SCRIPT = "rag-retrieve"


def python_module(module: str, *args: str) -> list[str]:
    """`python -P -m MODULE ARGS...` with this interpreter."""
    return [sys.executable, SAFE_PATH, "-m", module, *args]


def installed_script() -> str | None:
    """This environment's `rag-retrieve` by absolute path (beside the interpreter: where pip,
    pipx and uv install it); None in an environment without it."""
    script = Path(sys.executable).parent / SCRIPT
    return str(script) if script.is_file() else None


def query_program() -> tuple[str, ...]:
    """What takes `python -m query`'s words (a question, `mcp`, `symbol`, ...) for a command
    line shown to a person or an agent host: the installed script, else `python -P -m query`."""
    script = installed_script()
    return (script,) if script else tuple(python_module("query"))
