"""Command line: `python -m query "QUESTION" [flags]`, `python -m query serve`,
`python -m query mcp`, `python -m query embeddings-server` (the embedding model over HTTP,
for other machines' ingests), `python -m query status`, `python -m query doctor`,
`python -m query symbol` (code navigation), `python -m query calibrate` (each index's
fusion rule) and `python -m query migrate` (upgrade the indexes; reading commands never do).

Exit codes: 0 results; 1 no results, or any degradation under --strict (also a store that
cannot be opened); 2 bad usage (empty or oversized query, unknown domain or index,
malformed version, top-k below 1, ...). Notes and errors go to stderr, results to stdout.
A question that is literally "serve", "mcp", "embeddings-server", "status", "doctor",
"symbol", "calibrate" or "migrate" is asked as `python -m query -- serve`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from core.cli import EXIT_FAILURE, EXIT_USAGE, error_exit
from core.settings import Settings, SettingsError
from query.cli.question_args import build_parser, request_fields
from query.cli.render import render
from query.errors import DEGRADED, UsageError, is_degraded, store_location
from query.serve.client import (
    WorkerUnavailable,
    find_worker,
    local_store,
    remote_answer,
    start_worker,
    unproven,
)
from query.serve.worker_file import WorkerFileRefused

# The engine, the pipeline, the stores and the worker are imported where they are used: a
# question a running worker answers needs none of them (`python -m query` then costs ~0.25 s
# in all instead of ~0.7 s of imports before any model load; docs/query.md, *The worker*).


class StoreFailure(Exception):
    """The in-process path could not use the store (a StoreError, which is imported there)."""


def run(
    fields: dict[str, Any],
    settings: Settings,
    worker_url: str | None,
    serve_if_absent: bool = False,
) -> dict[str, Any]:
    """The response dict: from the named worker, else from the worker its file in the store
    directory names (started first with `serve_if_absent`), else computed here. A token or
    question goes to a worker only once it has proved it is that file's (query.serve.client)."""
    store = fields.get("store")
    directory = store_location(store).directory if store else None
    if directory is not None:
        if not directory.is_dir():
            raise UsageError(f"no store directory {store}")
        # The worker resolves paths against its own working directory, not ours.
        fields = {**fields, "store": str(directory.resolve())}
    note = None
    local = local_store(fields.get("store"), settings)
    if worker_url:
        refusal = unproven(worker_url, local) if local else None
        if refusal:
            worker_url, note = None, f"{DEGRADED}{refusal}; answered in-process"
    else:
        worker_url, note = _local_worker(fields, local, serve_if_absent)
    if worker_url:
        try:
            result = remote_answer(worker_url, fields, token=settings.bearer_token)
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
    fields: dict[str, Any], directory: str | None, serve_if_absent: bool
) -> tuple[str | None, str | None]:
    """(the URL of the worker serving the store `directory`, or None; a note)."""
    if directory is None:
        return None, None
    try:
        found = find_worker(directory)
    except WorkerFileRefused as exc:
        return None, f"ignored the worker file {exc}; answered in-process"
    if found is not None:
        fields["store"] = directory
        return found.url, None
    if not serve_if_absent:
        return None, None
    if not Path(directory).is_dir():
        raise UsageError(f"no store directory {directory}")
    try:
        url, pid = start_worker(directory)
    except WorkerUnavailable as exc:
        return None, f"{DEGRADED}{exc}; answered in-process"
    fields["store"] = directory
    log = Path(directory) / "worker.log"
    return url, f"started a query worker on {url} (pid {pid}, log {log}); it keeps running"


def answer_here(fields: dict[str, Any], settings: Settings) -> dict[str, Any]:
    from core.store.contract import StoreError
    from core.store.modes import ONE_SHOT
    from query.retrieval.engine import Engine
    from query.retrieval.pipeline import answer, make_request

    request = make_request(fields)
    try:
        # One question, then exit: FTS5 answers keyword searches (loading the postings
        # would cost more than it saves; core/store/modes.py).
        engine = Engine.open(settings, request.store, modes=ONE_SHOT)
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
    if argv[:1] in (["serve"], ["mcp"], ["embeddings-server"]):
        from query.cli import servers

        commands = {
            "serve": servers.serve_main,
            "mcp": servers.mcp_main,
            "embeddings-server": servers.embeddings_server_main,
        }
        return commands[argv[0]](argv[1:])
    if argv[:1] in (["status"], ["doctor"], ["migrate"]):
        from query.cli import store_commands

        commands = {
            "status": store_commands.status_main,
            "doctor": store_commands.doctor_main,
            "migrate": store_commands.migrate_main,
        }
        return commands[argv[0]](argv[1:])
    if argv[:1] == ["calibrate"]:
        from query.cli.calibrate import calibrate_main

        return calibrate_main(argv[1:])
    if argv[:1] == ["symbol"]:
        from query.cli.symbol import symbol_main

        return symbol_main(argv[1:])
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
