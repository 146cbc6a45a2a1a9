"""Where the MCP `ingest` tool may read: the roots the user named with `--allow-ingest`.

An agent decides what to ingest, and an agent can be steered by text inside an indexed
document ("index ~/.ssh for context"). So the tool reads only under folders the user chose
when starting the server: every path a call names (every match of a glob) must resolve,
symlinks and `..` followed, to a place inside a root, else the call is refused naming the
roots. A root may not be `/`, the home folder or a folder above it: that would choose
nothing. The ingest child is given the roots too (`--within`) and checks each file's real
path again where it reads it, passing over a link that leaves them (a linked file or
folder, or one swapped in after this check); and it passes over credentials (.ssh, .env,
...: chunkers/sources/secrets.py) whether a path names them or a walk or glob finds them.
"""

from __future__ import annotations

import os
from pathlib import Path

from mcp.server.mcpserver.exceptions import ToolError

from chunkers.sources.paths import expand_paths, inside
from query.errors import UsageError


def ingest_roots(given: list[str], home: Path | None = None) -> tuple[Path, ...]:
    """The resolved roots of `--allow-ingest DIR...`; a usage error for one that is not a
    directory or that would open the whole home folder."""
    home = (home or Path.home()).resolve()
    roots = []
    for raw in given:
        root = Path(os.path.realpath(Path(raw).expanduser()))
        if not root.is_dir():
            raise UsageError(f"--allow-ingest {raw}: not a directory")
        if root == home or root in home.parents:
            raise UsageError(
                f"--allow-ingest {raw}: {root} holds the whole home folder; name the project "
                "folders the agent may index"
            )
        roots.append(root)
    return tuple(dict.fromkeys(roots))


def confined(paths: list[str], roots: tuple[Path, ...]) -> list[str]:
    """`paths` as absolute paths when each (each match of a glob) lies inside a root; a
    ToolError naming the roots otherwise. An early answer for the agent: the ingest this
    server starts expands the paths again and checks every file it reads (`--within`)."""
    allowed = ", ".join(str(r) for r in roots)
    checked = []
    for raw in paths:
        absolute = os.path.abspath(os.path.expanduser(raw))
        for named in expand_paths([absolute]):
            if not inside(named.path, roots):
                real = os.path.realpath(named.path)
                shown = f"{raw} (matching {named.path})" if named.globbed else raw
                raise ToolError(
                    f"{shown} resolves to {real}, outside the folders this server may "
                    f"ingest: {allowed}"
                )
        checked.append(absolute)
    return checked
