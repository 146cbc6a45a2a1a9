"""Command line: `python -m query "QUESTION" [flags]`, `python -m query serve`,
`python -m query mcp`, `python -m query status` and `python -m query doctor`.

Exit codes: 0 results; 1 no results, or any degradation under --strict (also a store that
cannot be opened); 2 bad usage (empty or oversized query, unknown domain or index,
malformed version, top-k below 1, ...). Notes and errors go to stderr, results to stdout.
A question that is literally "serve", "mcp", "status" or "doctor" is asked as
`python -m query -- serve`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from core.cli import EXIT_FAILURE, EXIT_USAGE, error_exit
from core.settings import Settings, SettingsError
from query.client import (
    DEFAULT_URL,
    WorkerUnavailable,
    health,
    remote_answer,
    serves,
    start_worker,
)
from query.errors import DEGRADED, UsageError, is_degraded
from query.question_args import build_parser, request_fields
from query.render import render

# The engine, the pipeline, the stores and the worker are imported where they are used: a
# question a running worker answers needs none of them (`python -m query` then costs ~0.25 s
# in all instead of ~0.7 s of imports before any model load; README, *The worker*).


class StoreFailure(Exception):
    """The in-process path could not use the store (a StoreError, which is imported there)."""


def run(
    fields: dict[str, Any],
    settings: Settings,
    worker_url: str | None,
    serve_if_absent: bool = False,
) -> dict[str, Any]:
    """The response dict: from the named worker, else from a worker serving the same store
    directory on the default port (started first with `serve_if_absent`), else computed
    here."""
    store = fields.get("store")
    if store and "://" not in store:
        if not Path(store).is_dir():
            raise UsageError(f"no store directory {store}")
        # The worker resolves paths against its own working directory, not ours.
        fields = {**fields, "store": str(Path(store).resolve())}
    note = None
    if not worker_url:
        worker_url, note = _local_worker(fields, settings, serve_if_absent)
    if worker_url:
        try:
            result = remote_answer(worker_url, fields)
        except WorkerUnavailable as exc:
            note = f"{DEGRADED}{exc}; answered in-process"
        else:
            if note:
                result.setdefault("notes", []).insert(0, note)
            return result
    result = answer_here(fields, settings)
    if note:
        result["notes"].insert(0, note)
    return result


def _local_worker(
    fields: dict[str, Any], settings: Settings, serve_if_absent: bool
) -> tuple[str | None, str | None]:
    """(the URL of a worker serving this request's store directory, or None; a note)."""
    store = fields.get("store")
    if store is None and settings.tidb_host:
        return None, None  # name a TiDB-backed worker with --worker
    if store is not None and "://" in store:
        return None, None
    directory = str(Path(store or settings.index_dir).resolve())
    found = health(DEFAULT_URL)
    if found is not None and serves(found, directory):
        fields["store"] = directory
        return DEFAULT_URL, None
    if not serve_if_absent:
        return None, None
    if found is not None:
        return None, (
            f"{DEGRADED}the worker on {DEFAULT_URL} serves {found.get('store')}, not "
            f"{directory}; answered in-process"
        )
    if not Path(directory).is_dir():
        raise UsageError(f"no store directory {directory}")
    try:
        url, pid = start_worker(directory, DEFAULT_URL)
    except WorkerUnavailable as exc:
        return None, f"{DEGRADED}{exc}; answered in-process"
    fields["store"] = directory
    log = Path(directory) / "worker.log"
    return url, f"started a query worker on {url} (pid {pid}, log {log}); it keeps running"


def answer_here(fields: dict[str, Any], settings: Settings) -> dict[str, Any]:
    from core.store.contract import StoreError
    from query.engine import Engine
    from query.pipeline import answer, make_request

    request = make_request(fields)
    try:
        engine = Engine.open(settings, request.store)
        try:
            return answer(request, engine).to_dict()
        finally:
            engine.close()
    except StoreError as exc:
        raise StoreFailure(str(exc)) from exc


def exit_code(result: dict[str, Any], strict: bool) -> int:
    if strict and is_degraded(result):
        return 1
    return 0 if result.get("chunks") else 1


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["serve"]:
        return serve_main(argv[1:])
    if argv[:1] == ["status"]:
        return status_main(argv[1:])
    if argv[:1] == ["mcp"]:
        return mcp_main(argv[1:])
    if argv[:1] == ["doctor"]:
        return doctor_main(argv[1:])
    args = build_parser().parse_args(argv)
    fields = request_fields(args)
    try:
        settings = Settings.from_env()
        worker_url = args.worker or settings.query_worker_url
        result = run(fields, settings, worker_url, args.serve_if_absent)
    except (UsageError, SettingsError) as exc:
        return error_exit(exc, EXIT_USAGE)
    except StoreFailure as exc:
        return error_exit(exc, EXIT_FAILURE)
    for note in result.get("notes") or []:
        print(f"note: {note}", file=sys.stderr)
    print(json.dumps(result, ensure_ascii=False) if args.json else render(result))
    strict = bool(fields.get("strict"))
    code = exit_code(result, strict)
    if code and strict and is_degraded(result):
        print("error: --strict: the answer is degraded (see the notes above)", file=sys.stderr)
    return code


def serve_main(argv: list[str]) -> int:
    from core.store.contract import StoreError
    from query.worker import WorkerLimits, open_engine, serve

    p = argparse.ArgumentParser(prog="python -m query serve", description=serve.__doc__)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=int(DEFAULT_URL.rsplit(":", 1)[1]))
    p.add_argument("--store", metavar="DIR|tidb://...", help="default: RAG_INDEX_DIR or TiDB")
    args = p.parse_args(argv)
    try:
        settings = Settings.from_env()
        engine = open_engine(settings, args.store)
        serve(engine, args.host, args.port, WorkerLimits.from_settings(settings))
    except (UsageError, SettingsError) as exc:
        return error_exit(exc, EXIT_USAGE)
    except (StoreError, OSError) as exc:
        return error_exit(exc, EXIT_FAILURE)
    return 0


def mcp_main(argv: list[str]) -> int:
    from core.store.contract import StoreError
    from query.agent_config import CONFIG_KINDS, launch_here, render_config
    from query.mcp_server import MCP_PATH, build_server, http_app
    from query.worker import WorkerLimits, WorkerServer, create_app, open_engine

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
        "--allow-ingest", action="store_true", help="offer the ingest tool (it writes the store)"
    )
    p.add_argument(
        "--watch",
        action="append",
        metavar="DIR",
        help="follow this directory while serving (repeatable): edits are re-indexed into the "
        "first --index (default: default) within seconds, as `python -m flows.ingest DIR "
        "--watch` does",
    )
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
        settings = Settings.from_env()
        if args.print_config:
            launch = launch_here(settings, args.store, names, args.allow_ingest, tuple(watch_paths))
            print(render_config(args.print_config, launch), end="")
            return 0
        limits = WorkerLimits.from_settings(settings)
        engine = open_engine(settings, args.store)
        server = build_server(
            engine,
            default_indexes=names or None,
            allow_ingest=args.allow_ingest,
            ingest_index=names[0] if names else "default",
            threads=limits.threads,
            watch_paths=watch_paths,
        )
        try:
            if not args.http:
                server.run("stdio")  # the SDK points fd 1 at stderr while it serves
                return 0
            app = http_app(server, create_app(engine, limits), args.host)
            http = WorkerServer(engine, args.host, args.port, limits=limits, app=app)
            http.log(
                f"MCP server on {http.url}{MCP_PATH} and query worker on {http.url} (store "
                f"{engine.location}, indexes: {', '.join(engine.index_names()) or 'none'})"
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


def _store_command(name: str, description: str) -> argparse.ArgumentParser:
    """The parser of a subcommand that reads one store: --store and --json."""
    p = argparse.ArgumentParser(prog=f"python -m query {name}", description=description)
    p.add_argument("--store", metavar="DIR|tidb://...", help="default: RAG_INDEX_DIR or TiDB")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    return p


def _settings_for_store(store: str | None) -> Settings:
    """The settings, after checking that a --store directory exists (a usage error)."""
    settings = Settings.from_env()
    if store and "://" not in store and not Path(store).is_dir():
        raise UsageError(f"no store directory {store}")
    return settings


def status_main(argv: list[str]) -> int:
    from core.store.contract import StoreError
    from query.status import damaged, render_status, store_status

    args = _store_command("status", "What the store's indexes hold.").parse_args(argv)
    try:
        settings = _settings_for_store(args.store)
        status = store_status(settings, args.store)
    except (UsageError, SettingsError) as exc:
        return error_exit(exc, EXIT_USAGE)
    except StoreError as exc:
        return error_exit(exc, EXIT_FAILURE)
    print(
        json.dumps(status, ensure_ascii=False, default=str) if args.json else render_status(status)
    )
    bad = damaged(status)
    if bad:
        print(
            f"error: damaged index(es): {', '.join(bad)}; move the file aside and ingest again "
            "to rebuild",
            file=sys.stderr,
        )
        return 1
    return 0


def doctor_main(argv: list[str]) -> int:
    from query.doctor import as_json, diagnose, failed, render

    args = _store_command(
        "doctor",
        "What works (model, indexes, worker, endpoints, Prefect API), each line OK or the "
        "fix; exit 1 when a check fails.",
    ).parse_args(argv)
    try:
        settings = _settings_for_store(args.store)
    except (UsageError, SettingsError) as exc:
        return error_exit(exc, EXIT_USAGE)
    checks = diagnose(settings, args.store)
    print(json.dumps(as_json(checks)) if args.json else render(checks))
    return EXIT_FAILURE if failed(checks) else 0


if __name__ == "__main__":
    sys.exit(main())
