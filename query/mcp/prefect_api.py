"""The MCP server's Prefect API for its ingest and embed children.

Each child is a Prefect flow run and needs an API: without a configured one, each would start
Prefect's temporary server and wait ~10 s for it (~20 s on a machine that never ran Prefect),
longer than the ingest of a few files takes. So a server with an ingest tool runs
`python -m flows.prefect_api` once, as a child of its own (the query side never imports the
flows), and its children inherit the address in `PREFECT_API_URL`: a tool call waits for
none. A call made while that server is still starting runs as before, with a server of its
own. The server goes when the MCP server does: the holder reads its stdin to the end.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable

import anyio
from anyio.abc import Process

from core.own_command import python_module
from query.mcp.children import end_child

API_VARIABLE = "PREFECT_API_URL"


class PrefectApiHolder:
    """`python -m flows.prefect_api` for the lifetime of the server's task group."""

    def __init__(self, log: Callable[[str], None]) -> None:
        self._log = log
        self.url: str | None = None
        # Set once the children's API is known: this one's, a configured one, or none
        # (it failed to start: each child then starts its own).
        self.settled = anyio.Event()

    async def run(self) -> None:
        """Start the holder, put its API's address in this process's environment (which
        the children inherit), and keep it until cancelled."""
        if os.environ.get(API_VARIABLE):
            self.settled.set()
            return  # configured: the children use it
        process: Process = await anyio.open_process(
            python_module("flows.prefect_api"),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        try:
            assert process.stdout is not None
            line = b""
            async for chunk in process.stdout:
                line += chunk
                if b"\n" in line:
                    break
            reply = json.loads(line.decode() or "{}")
            if reply.get("api_url"):
                self.url = reply["api_url"]
                os.environ[API_VARIABLE] = self.url
            elif "error" in reply:
                self._log(f"mcp: Prefect's API for the ingest tool did not start: {reply['error']}")
            self.settled.set()
            await anyio.sleep_forever()
        finally:
            if self.url is not None and os.environ.get(API_VARIABLE) == self.url:
                del os.environ[API_VARIABLE]
            await end_child(process)
