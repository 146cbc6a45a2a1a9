"""How the MCP server ends the children it keeps waiting (the Prefect API's holder, the
prestarted ingest child): each exits at the end of file on its stdin, which is also what it
sees if the server dies; one that does not within GRACE_S is killed."""

from __future__ import annotations

import anyio
from anyio.abc import Process

GRACE_S = 10


async def end_child(process: Process) -> None:
    """Close the child's stdin and wait for it to exit; kill it after GRACE_S. Shielded: it
    runs while the server's task group is being cancelled."""
    with anyio.CancelScope(shield=True):
        if process.stdin is not None:
            await process.stdin.aclose()
        with anyio.move_on_after(GRACE_S):
            await process.wait()
        if process.returncode is None:
            process.kill()
            await process.wait()
        await process.aclose()
