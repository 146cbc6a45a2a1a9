"""`python -m query serve` (the warm query worker), `python -m query mcp` (the MCP server,
stdio or streamable HTTP beside the worker's routes) and `python -m query embeddings-server`
(the embedding model over OpenAI's embeddings protocol, for other machines' ingests)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from core.cli import EXIT_FAILURE, EXIT_USAGE, error_exit
from core.settings import Settings, SettingsError
from query.errors import UsageError
from query.serve.client import DEFAULT_URL
from query.serve.guard import Access, check_bind, read_token_file


def add_access_flags(p: argparse.ArgumentParser) -> None:
    """The flags that say who may reach a server (query/serve/guard.py)."""
    p.add_argument(
        "--token-file",
        type=Path,
        metavar="PATH",
        help="require 'Authorization: Bearer <token>' with the token in PATH (mode 0600) on "
        "every route but GET /live (RAG_AUTH_TOKEN does the same)",
    )
    p.add_argument(
        "--insecure-no-token",
        action="store_true",
        help="serve a non-loopback --host without a token (anyone who can connect may ask)",
    )


def server_access(args: argparse.Namespace, settings: Settings) -> Access:
    """Who may reach a server bound to args.host; refuses an open non-loopback bind."""
    token = read_token_file(args.token_file) if args.token_file else None
    access = Access.for_server(args.host, settings, token)
    check_bind(args.host, access, args.insecure_no_token)
    return access


def serve_main(argv: list[str]) -> int:
    from core.store.contract import StoreError
    from query.serve.worker import WorkerLimits, open_engine, serve

    p = argparse.ArgumentParser(prog="python -m query serve", description=serve.__doc__)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=int(DEFAULT_URL.rsplit(":", 1)[1]))
    p.add_argument("--store", metavar="DIR|tidb://...", help="default: RAG_INDEX_DIR or TiDB")
    add_access_flags(p)
    args = p.parse_args(argv)
    try:
        settings = Settings.from_env()
        access = server_access(args, settings)
        engine = open_engine(settings, args.store)
        serve(engine, args.host, args.port, WorkerLimits.from_settings(settings), access)
    except (UsageError, SettingsError) as exc:
        return error_exit(exc, EXIT_USAGE)
    except (StoreError, OSError) as exc:
        return error_exit(exc, EXIT_FAILURE)
    return 0


def mcp_main(argv: list[str]) -> int:
    """`python -m query mcp` (`rag-retrieve mcp`)."""
    from core.store.contract import StoreError
    from query.cli.agent_config import CONFIG_KINDS, launch_here, render_config
    from query.mcp.ingest_roots import ingest_roots
    from query.mcp.server import MCP_PATH, build_server, http_app
    from query.serve.worker import WorkerLimits, WorkerServer, create_app, open_engine

    p = argparse.ArgumentParser(
        prog="python -m query mcp",
        description="The retrieval tools as an MCP server: stdio by default, streamable HTTP "
        f"on {MCP_PATH} with --http (beside the worker's POST /retrieve and GET /health).",
    )
    p.add_argument("--store", metavar="DIR|tidb://...", help="default: RAG_INDEX_DIR or TiDB")
    p.add_argument(
        "--index",
        dest="indexes",
        action="append",
        metavar="NAME[,NAME...]",
        help="what retrieve searches when a call names no index (default: all); the first is "
        "where ingest writes when a call names none (default: default)",
    )
    p.add_argument("--http", action="store_true", help="streamable HTTP instead of stdio")
    p.add_argument("--host", default="127.0.0.1", help="with --http (default 127.0.0.1)")
    p.add_argument(
        "--port",
        type=int,
        default=int(DEFAULT_URL.rsplit(":", 1)[1]),
        help="with --http (default %(default)s, the worker's: this process answers its "
        "requests too)",
    )
    p.add_argument(
        "--allow-ingest",
        action="extend",
        nargs="+",
        metavar="DIR",
        help="offer the ingest tool (it writes the store), reading only under these folders "
        "(not / nor the home folder itself; credentials are never read)",
    )
    p.add_argument(
        "--watch",
        action="append",
        metavar="DIR",
        help="follow this directory while serving (repeatable): edits are re-indexed into the "
        "first --index (default: default) within seconds, as `python -m flows.ingest DIR "
        "--watch` does",
    )
    add_access_flags(p)
    p.add_argument(
        "--print-config",
        choices=CONFIG_KINDS,
        help="print what registers this server, with these flags, with an agent host and exit: "
        "the `claude mcp add` command, the mcpServers JSON block, or the OpenClaw SKILL.md",
    )
    args = p.parse_args(argv)
    names = tuple(
        dict.fromkeys(n.strip() for v in args.indexes or () for n in v.split(",") if n.strip())
    )
    if args.print_config and args.http:
        p.error("--print-config describes the stdio server; register --http by its URL")
    try:
        watch_paths = [str(Path(path).resolve()) for path in args.watch or ()]
        for path, given in zip(watch_paths, args.watch or (), strict=True):
            if not Path(path).is_dir():
                raise UsageError(f"--watch {given}: not a directory")
        roots = ingest_roots(args.allow_ingest or [])
        settings = Settings.from_env()
        if args.print_config:
            launch = launch_here(settings, args.store, names, roots, tuple(watch_paths))
            print(render_config(args.print_config, launch), end="")
            return 0
        access = server_access(args, settings) if args.http else None
        limits = WorkerLimits.from_settings(settings)
        engine = open_engine(settings, args.store)
        server = build_server(
            engine,
            default_indexes=names or None,
            ingest_roots=roots,
            ingest_index=names[0] if names else "default",
            threads=limits.threads,
            watch_paths=watch_paths,
            prestart=settings.mcp_prestart,
        )
        try:
            if not args.http:
                server.run("stdio")  # the SDK points fd 1 at stderr while it serves
                return 0
            app = http_app(server, create_app(engine, limits))
            http = WorkerServer(engine, args.host, args.port, limits=limits, app=app, access=access)
            http.log(
                f"MCP server on {http.url}{MCP_PATH} and query worker on {http.url} (store "
                f"{engine.shown_location}, indexes: "
                f"{', '.join(engine.index_names()) or 'none'})"
            )
            try:
                http.serve_forever()
            finally:
                http.server_close()
        finally:
            engine.close()
    except (UsageError, SettingsError) as exc:
        return error_exit(exc, EXIT_USAGE)
    except (StoreError, OSError) as exc:
        return error_exit(exc, EXIT_FAILURE)
    return 0


def embeddings_server_main(argv: list[str]) -> int:
    """`python -m query embeddings-server` (`rag-retrieve embeddings-server`)."""
    from core.embedding.base import EmbeddingError
    from core.embedding.model_files import FetchFailed
    from core.embedding.runtimes import load_local_embedder
    from query.serve.embeddings import DEFAULT_PORT, EmbeddingsServer, ServedModel

    p = argparse.ArgumentParser(
        prog="python -m query embeddings-server",
        description="Serve the embedding model (RAG_EMBEDDING_MODEL, on the local runtime "
        "RAG_EMBEDDING_RUNTIME picks: MLX on Apple Silicon, else ONNX Runtime) over OpenAI's "
        "POST /v1/embeddings, for ingests on other machines (EMBEDDING_ENDPOINT there). Texts "
        "are embedded as sent: clients add the model's prefixes.",
    )
    p.add_argument(
        "--host",
        default="127.0.0.1",
        help="default %(default)s (this machine only); another needs a token, and the names "
        "clients use in RAG_ALLOWED_HOSTS",
    )
    p.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help="default %(default)s; 0: any free port"
    )
    add_access_flags(p)
    p.add_argument(
        "--json",
        action="store_true",
        help="once listening, print one JSON line to stdout: url, model, revision, runtime, "
        "precision, dim",
    )
    args = p.parse_args(argv)
    try:
        settings = Settings.from_env()
        access = server_access(args, settings)
        if settings.embedding_runtime == "http":
            raise UsageError(
                "RAG_EMBEDDING_RUNTIME=http: the embeddings server runs the model itself; "
                "choose auto, onnx, mlx or torch"
            )
    except (UsageError, SettingsError) as exc:
        return error_exit(exc, EXIT_USAGE)
    try:
        # Local, never EMBEDDING_ENDPOINT: a server that forwarded would serve another
        # machine's model under this one's name.
        embedder = load_local_embedder(settings, settings.embedding_runtime)
    except (EmbeddingError, FetchFailed, OSError) as exc:
        return error_exit(
            f"cannot load the embedding model RAG_EMBEDDING_MODEL={settings.embedding_model}: "
            f"{exc} (`rag-retrieve model install` fetches a registered model)",
            EXIT_FAILURE,
        )
    try:
        server = EmbeddingsServer(ServedModel(embedder), access, args.host, args.port)
    except OSError as exc:
        return error_exit(f"cannot listen on {args.host}:{args.port}: {exc}", EXIT_FAILURE)
    server.log(server.ready_line())
    if args.json:
        print(json.dumps(server.ready_json()), flush=True)
    server.serve_forever()
    return 0
