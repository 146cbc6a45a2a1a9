"""`python -m query mcp`: the query pipeline as MCP tools, on the official SDK (MCPServer).

Tools, following the seed skill's contract (inputs and outputs of `rag-retrieve`):

    retrieve(query, domain?, ios_version?, frameworks?, top_k?, use_corag?, user_codebase?,
             indexes?, max_tokens?) -> chunks, total_tokens, query_expansions, corag_trace, notes
    list_indexes()                  -> store, query_model, indexes
    index_status(index?)            -> what `python -m query status --json` shows, and the
                                       watch's state with --watch
    ingest(paths, index?)           -> the ingest summary; only with --allow-ingest DIR...,
                                       and only under those folders
    find_symbol / find_references / call_graph(name, indexes?, kinds?, max_tokens?, cursor?)
                                    -> one page of definitions / uses / call edges
                                       (query.mcp.navigation)

One warm Engine serves every call, as in the worker (query.serve.worker.open_engine; warmed in the
background as serving starts, so that a host's handshake never waits for the model). Over
streamable HTTP the same process also answers the worker's POST /retrieve and GET /health.

Validation is the CLI's and the worker's (query.retrieval.pipeline.make_request): the retrieve tool's
arguments reach it as given, so a bad one comes back as a tool error (isError) with the
message the CLI prints. Its input schema is QueryRequest's own, field for field.
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types import ToolAnnotations
from pydantic import BaseModel, Field
from starlette.routing import Mount
from starlette.types import ASGIApp

from core.cli import package_version
from core.store.contract import UnknownIndex
from core.store.location import StoreLocation
from query.errors import UsageError
from query.mcp.embedding import BackgroundEmbeds
from query.mcp.ingest import IngestResult, child_environment, run_ingest_cli
from query.mcp.ingest_roots import confined
from query.mcp.navigation import navigation_tools
from query.mcp.prefect_api import PrefectApiHolder
from query.mcp.prestarted import PrestartedChild
from query.mcp.watch import Watcher
from query.retrieval.engine import Engine
from query.retrieval.pipeline import answer, make_request
from query.retrieval.status import status_of
from query.types import QueryRequest

SERVER_NAME = "rag-retrieve"
MCP_PATH = "/mcp"
# Tool argument -> QueryRequest field: the skill says use_corag where the request says corag.
RETRIEVE_ARGS = {
    "query": "query",
    "domain": "domain",
    "ios_version": "ios_version",
    "frameworks": "frameworks",
    "top_k": "top_k",
    "use_corag": "corag",
    "user_codebase": "user_codebase",
    "indexes": "indexes",
    "max_tokens": "max_tokens",
}

INSTRUCTIONS = """\
Version-aware retrieval over indexed developer documentation (Apple docs, WWDC transcripts, \
Python docs, chat history) and the user's own code. Call `retrieve` before writing code \
against an API you are not sure of, or to find where something lives in the user's \
codebase; pass the project's iOS deployment target as `ios_version` for Apple-platform \
questions. Before changing a declaration of the user's code, `find_references` lists where \
it is used and `call_graph` what calls it (`find_symbol`: where it is declared). \
`list_indexes` and `index_status` say what is searchable."""

RETRIEVE_DESCRIPTION = """\
Find the chunks of documentation and code that answer a question: hybrid keyword and \
vector search over the indexes, filtered by platform version, best first.

- ios_version: pass the iOS deployment target (e.g. "17.0") whenever the question is about \
Apple APIs and the target is known; chunks about APIs introduced after it, or deprecated \
by it, are dropped, so the answer fits the project. Leave it out otherwise.
- use_corag: true for multi-hop questions, whose answer depends on something the first \
results name (a type they return, a document they point to); it runs follow-up searches \
and is slower. Leave false for direct lookups.
- top_k: at most this many chunks (default 10). max_tokens: a budget for all chunks \
together; lower-ranked chunks are dropped until the rest fit, so fewer may come back.
- domain filters (the domain, 'general', and the user's code unless user_codebase is \
false); frameworks boosts chunks tagged with them, it does not filter.

Returns chunks (content, context, path, source, index, versions, score, token_count), \
total_tokens, the query_expansions searched, the corag_trace of follow-up hops, and notes; \
a note starting "degraded: " means a part of the pipeline did not run."""


class RetrieveResult(BaseModel):
    """The seed skill's outputs."""

    chunks: list[dict[str, Any]] = Field(
        description="Best first, each as `python -m query --json` prints it: chunk_id, "
        "content, context, source, path, index, domain, chunk_type, symbol, ios_version_min, "
        "ios_version_max, framework_tags, deprecated, score, token_count, ..."
    )
    total_tokens: int = Field(description="Tokens of all chunks (the embedding tokenizer's).")
    query_expansions: list[str] = Field(description="The query variants searched, original first.")
    corag_trace: list[dict[str, Any]] | None = Field(
        description="With use_corag: each follow-up hop (query, new_chunk_ids, reason)."
    )
    notes: list[str] = Field(description="What ran and what did not ('degraded: ...').")


class IndexList(BaseModel):
    store: str = Field(description="The store this server reads (a directory or tidb:// URL).")
    query_model: str | None = Field(description="The model this server embeds queries with.")
    indexes: list[str] = Field(description="Names to pass as `indexes` to retrieve.")


class StoreStatus(BaseModel):
    store: str = Field(description="The store this server reads (a directory or tidb:// URL).")
    query_model: str | None = Field(description="The model this server embeds queries with.")
    indexes: dict[str, dict[str, Any]] = Field(
        description="Per index: health (ok, damaged, unreadable), documents, chunks, "
        "vectors, vector_coverage (0..1, the share of chunks with a vector) and "
        "chunks_pending (chunks still waiting for one; keyword search covers them, "
        "`rag-retrieve embed` embeds them), model_id and dim of its vectors, and what else "
        "the backend reports."
    )
    watch: dict[str, Any] | None = Field(
        default=None,
        description="With the server's --watch: the directories followed, the index they "
        "feed, whether the watcher is running, its runs (failed_runs among them), the last "
        "run's counts and time (UTC), and the last error.",
    )
    embedding: list[str] = Field(
        default_factory=list,
        description="The indexes this server is embedding in the background now (after "
        "its ingest tool made them keyword-searchable).",
    )


class McpServerState:
    """The engine, its warm-up and the limits of one server process."""

    def __init__(
        self,
        engine: Engine,
        *,
        default_indexes: tuple[str, ...] | None,
        threads: int,
        log: Callable[[str], None],
        watcher: Watcher | None = None,
        embeds: BackgroundEmbeds | None = None,
        prefect_api: PrefectApiHolder | None = None,
        prestarted: PrestartedChild | None = None,
    ) -> None:
        self.engine = engine
        self.embeds = embeds
        self.prefect_api = prefect_api
        self.prestarted = prestarted
        self.default_indexes = default_indexes
        self.log = log
        self.threads = threads
        self.watcher = watcher
        self._warm: anyio.Event | None = None
        self._limiter: anyio.CapacityLimiter | None = None

    @asynccontextmanager
    async def lifespan(self, _server: MCPServer) -> AsyncIterator[None]:
        """Entered once per process (both transports): warm the engine in the background."""
        self._warm = anyio.Event()
        # The engine serialises inference, so more threads than the worker's only queue.
        self._limiter = anyio.CapacityLimiter(self.threads)
        async with anyio.create_task_group() as group:
            group.start_soon(self._warm_up)
            if self.prefect_api is not None:
                group.start_soon(self.prefect_api.run)
            if self.prestarted is not None:
                # Started once Prefect's API is known: the child imports Prefect with it.
                settled = self.prefect_api.settled if self.prefect_api is not None else None
                group.start_soon(self.prestarted.run, settled)
            if self.embeds is not None:
                self.embeds.attach(group)
            if self.watcher is not None:
                group.start_soon(self.watcher.run)
            try:
                yield
            finally:
                group.cancel_scope.cancel()

    async def _warm_up(self) -> None:
        assert self._warm is not None
        try:
            await anyio.to_thread.run_sync(self.engine.warm, abandon_on_cancel=True)
        except Exception:  # calls load what they need themselves, and report it
            self.log(f"mcp: warming the engine failed:\n{traceback.format_exc()}")
        finally:
            self._warm.set()

    async def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        """`fn(*args)` in a worker thread, once the engine is warm."""
        if self._warm is not None:
            await self._warm.wait()
        return await anyio.to_thread.run_sync(fn, *args, limiter=self._limiter)

    async def run_now(self, fn: Callable[..., Any], *args: Any) -> Any:
        """`fn(*args)` in a worker thread without waiting for the warm-up: for calls that
        need no model (code navigation reads the store and the tokenizer only)."""
        return await anyio.to_thread.run_sync(fn, *args, limiter=self._limiter)


def retrieve_input_schema() -> dict[str, Any]:
    """The retrieve tool's JSON schema: QueryRequest's fields under the skill's names."""
    fields = QueryRequest.model_json_schema()["properties"]
    properties = {}
    for argument, field in RETRIEVE_ARGS.items():
        schema = {k: v for k, v in fields[field].items() if k != "title"}
        properties[argument] = schema
    return {"type": "object", "properties": properties, "required": ["query"]}


def request_fields(arguments: dict[str, Any], default_indexes: tuple[str, ...] | None) -> dict:
    fields = {RETRIEVE_ARGS[k]: v for k, v in arguments.items() if v is not None}
    if "indexes" not in fields and default_indexes:
        fields["indexes"] = list(default_indexes)
    return fields


def _tool_error(exc: Exception, argument_names: dict[str, str] | None = None) -> ToolError:
    """The CLI's message, with the request's field names put back to the tool's."""
    message = str(exc)
    for argument, field in (argument_names or {}).items():
        if argument != field and message.startswith(f"{field} "):
            message = argument + message[len(field) :]
    return ToolError(message)


def build_server(
    engine: Engine,
    *,
    default_indexes: tuple[str, ...] | None = None,
    ingest_roots: tuple[Path, ...] = (),
    ingest_index: str = "default",
    threads: int = 4,
    watch_paths: list[str] | None = None,
    log: Callable[[str], None] | None = None,
    prestart: bool = True,
) -> MCPServer:
    """The MCP server around one engine (not warmed here: serving starts that); with
    `ingest_roots`, an ingest tool that reads under those folders only (its next child started
    ahead of the call, with `prestart`); with `watch_paths`, a watcher follows those
    directories into `ingest_index` while it serves."""
    say = log or (lambda line: print(line, file=sys.stderr, flush=True))
    watcher = None
    if watch_paths:

        async def load_new_generation() -> None:
            await state.run(engine.warm_indexes)

        watcher = Watcher.for_index(
            watch_paths,
            ingest_index,
            engine.location_with_credentials,
            load_new_generation,
            say,
        )

    async def load_new_vectors() -> None:
        await state.run(engine.warm_indexes)

    embeds = BackgroundEmbeds(engine.location_with_credentials, load_new_vectors, say)

    def store_environment() -> dict[str, str] | None:
        return child_environment(StoreLocation.parse(engine.location_with_credentials))

    state = McpServerState(
        engine,
        default_indexes=default_indexes,
        threads=threads,
        log=say,
        watcher=watcher,
        embeds=embeds,
        # The ingest tool's children (and their background embeds) share one Prefect API.
        prefect_api=PrefectApiHolder(say) if ingest_roots else None,
        # The next ingest child, started before the call that needs it.
        prestarted=PrestartedChild(store_environment, say) if ingest_roots and prestart else None,
    )
    ingest_lock = anyio.Lock()

    # Typed Any but `query`: validation is make_request's, so that a bad argument gets the
    # CLI's message; `query` stays a str so the SDK never parses a JSON-looking query.
    async def retrieve(
        query: str,
        domain: Any = None,
        ios_version: Any = None,
        frameworks: Any = None,
        top_k: Any = None,
        use_corag: Any = None,
        user_codebase: Any = None,
        indexes: Any = None,
        max_tokens: Any = None,
    ) -> RetrieveResult:
        arguments = {
            "query": query,
            "domain": domain,
            "ios_version": ios_version,
            "frameworks": frameworks,
            "top_k": top_k,
            "use_corag": use_corag,
            "user_codebase": user_codebase,
            "indexes": indexes,
            "max_tokens": max_tokens,
        }
        try:
            request = make_request(request_fields(arguments, state.default_indexes))
            response = await state.run(answer, request, engine)
        except UsageError as exc:
            raise _tool_error(exc, RETRIEVE_ARGS) from None
        return RetrieveResult.model_validate(response.to_dict())

    async def list_indexes() -> IndexList:
        """The indexes this server searches, the store that holds them, and the model it
        embeds queries with. Cheap; index_status has counts and health."""
        names = await state.run(engine.index_names)
        model = await state.run(engine.model_id)
        return IndexList(store=engine.shown_location, query_model=model, indexes=names)

    async def index_status(
        index: Annotated[str | None, Field(description="One index; default: every index.")] = None,
    ) -> StoreStatus:
        """What `python -m query status` shows for each index (or the one named): health
        (the store's integrity check), documents, chunks, vectors, how much of the index
        has vectors (vector_coverage, chunks_pending: while it embeds, retrieve searches the
        rest by keyword), the embedding model the index was built with and its dimension.
        Use it when retrieve finds nothing, or to check that an index was built with the
        model this server queries with. When the server follows directories (--watch),
        `watch` says when it last re-indexed them."""
        try:
            names = await state.run(engine.resolve_indexes, (index,) if index else None)
        except UnknownIndex as exc:
            raise _tool_error(exc) from None
        # The engine's own store, so the paths are those this server's searches take.
        status = await state.run(status_of, engine.store, names)
        model = await state.run(engine.model_id)
        watch = watcher.status.to_dict() if watcher is not None else None
        return StoreStatus(
            store=status["store"],
            query_model=model,
            indexes=status["indexes"],
            watch=watch,
            embedding=embeds.running(),
        )

    async def ingest(
        paths: Annotated[
            list[str],
            Field(
                min_length=1,
                description="Files, directories or globs, as `python -m flows.ingest` takes "
                "them; relative ones from the server's working directory.",
            ),
        ],
        index: Annotated[
            str | None,
            Field(
                description="Index to write; default: the server's first --index, else 'default'."
            ),
        ] = None,
    ) -> IngestResult:
        """Index (or re-index) files into this server's store, incrementally: only new and
        changed documents are read again, deleted ones are pruned. Returns as soon as the
        files are keyword-searchable (retrieve finds them at once); their vectors are then
        computed in the background and join retrieve's results as they land (index_status:
        vector_coverage). Use it after editing or adding files that retrieve should find.
        Only paths inside the folders the user allowed are read (an error names them);
        credentials are never read."""
        inside = confined(paths, ingest_roots)
        name = index or ingest_index
        async with ingest_lock:
            result = await run_ingest_cli(
                inside,
                name,
                engine.location_with_credentials,
                ingest_roots,
                vectors_later=True,
                prestarted=state.prestarted,
            )
        await state.run(engine.warm_indexes)  # the new generation, loaded before the next query
        pending = int(result.summary.get("chunks_pending", 0))
        if pending and embeds.request(name):
            result.embedding = (
                f"{pending} chunks of index {name!r} are being embedded in the background; "
                "retrieve finds them by keyword meanwhile"
            )
        elif pending:
            result.embedding = (
                f"{pending} chunks of index {name!r} wait for vectors: `rag-retrieve embed "
                f"--index {name}` embeds them; retrieve finds them by keyword meanwhile"
            )
        return result

    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)
    tools = [
        Tool.from_function(
            retrieve, description=RETRIEVE_DESCRIPTION, annotations=read_only
        ).model_copy(update={"parameters": retrieve_input_schema()}),
        Tool.from_function(list_indexes, annotations=read_only),
        Tool.from_function(index_status, annotations=read_only),
        *navigation_tools(engine, state.run_now, default_indexes),
    ]
    if ingest_roots:
        # Not destructive: it deletes only the documents of files gone from under its paths.
        writes = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True)
        tools.append(Tool.from_function(ingest, annotations=writes))
    return MCPServer(
        SERVER_NAME,
        version=package_version(),
        instructions=INSTRUCTIONS,
        tools=tools,
        lifespan=state.lifespan,
        # INFO would also turn on every library's INFO logging (basicConfig on the root).
        log_level="WARNING",
    )


def http_app(server: MCPServer, worker_app: ASGIApp) -> ASGIApp:
    """MCP on /mcp and, on every other path, the worker's app (POST /retrieve, GET /health).
    Served behind the one guard of both (query/serve/guard.py, which WorkerServer puts in
    front of whatever it serves): the SDK's own Host/Origin check is off, or /mcp would
    answer a different list of hosts than /retrieve (no `localhost` without a port, no
    RAG_ALLOWED_HOSTS)."""
    app = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    app.router.routes.append(Mount("/", app=worker_app))
    return app
