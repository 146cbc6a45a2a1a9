"""The vector phase of the ingest tool's runs, in the background.

The ingest tool runs `python -m flows.ingest --vectors later`, which returns as soon as the
files are keyword-searchable (seconds), and then asks this object for the rest: a
`python -m flows.embed` child per index, under the index's write slot, while the server
goes on answering (from keyword results, and from vectors as each page commits). One child
per index at a time; an ingest that lands while one runs asks for one more pass, since its
new chunks may sort before the running pass's cursor. A child that fails, or a server that
stops, leaves the chunks pending: the index says so (index_status), and the next ingest,
or `rag-retrieve embed`, finishes them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from anyio.abc import TaskGroup
from mcp.server.mcpserver.exceptions import ToolError

from query.mcp.ingest import run_embed_cli


class BackgroundEmbeds:
    """Background `flows.embed` children of one server, keyed by index."""

    def __init__(
        self,
        store: str,
        after_each: Callable[[], Awaitable[None]],
        log: Callable[[str], None],
    ) -> None:
        self.store = store
        self._after_each = after_each  # the new vectors, loaded before the next query
        self._log = log
        self._group: TaskGroup | None = None
        self._running: set[str] = set()
        self._again: set[str] = set()

    def attach(self, group: TaskGroup) -> None:
        """The server's task group, which the children run in (and are stopped with)."""
        self._group = group

    def running(self) -> list[str]:
        """The indexes being embedded now."""
        return sorted(self._running)

    def request(self, index: str) -> bool:
        """Embed what `index` holds without vectors, now or after the pass under way; False
        when the server is not serving (no task group), and nothing was started."""
        if index in self._running:
            self._again.add(index)
            return True
        if self._group is None:
            return False
        self._running.add(index)
        self._group.start_soon(self._embed, index)
        return True

    async def _embed(self, index: str) -> None:
        try:
            while True:
                self._again.discard(index)
                try:
                    summary = await run_embed_cli(index, self.store)
                except ToolError as exc:
                    self._log(f"mcp: embedding index {index} stopped: {exc}")
                    return
                self._log(
                    f"mcp: embedded {summary.get('chunks_embedded', 0)} chunks of index "
                    f"{index} ({summary.get('embedding_cache_hits', 0)} from cache); "
                    f"{summary.get('chunks_pending', 0)} wait"
                )
                await self._after_each()
                if index not in self._again:
                    return
        finally:
            self._running.discard(index)
