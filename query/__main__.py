"""Command line: `python -m query "QUESTION" [flags]`, `python -m query serve` and
`python -m query status`.

Exit codes: 0 results; 1 no results, or any degradation under --strict (also a store that
cannot be opened); 2 bad usage (empty or oversized query, unknown domain or index,
malformed version, top-k below 1, ...). Notes and errors go to stderr, results to stdout.
A question that is literally "serve" or "status" is asked as `python -m query -- serve`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from core.cli import EXIT_FAILURE, EXIT_USAGE, error_exit
from core.settings import Settings, SettingsError
from core.store.contract import StoreError
from query.engine import Engine
from query.pipeline import UsageError, answer, is_degraded, make_request
from query.render import render
from query.retrieve import DEGRADED
from query.status import damaged, render_status, store_status
from query.types import DEFAULT_FUSION, QueryRequest
from query.worker import WorkerLimits, WorkerUnavailable, remote_answer, serve


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m query",
        description="Hybrid, version-aware retrieval over the indexes of a store. "
        "`python -m query serve` runs the warm HTTP worker.",
    )
    p.add_argument("query", help="the question")
    flag = p.add_argument
    flag("--domain", help="ios, web, python, trading, vc or general; D admits D and general")
    flag("--ios-version", metavar="X.Y", help="target iOS version, e.g. 17.0")
    flag(
        "--framework",
        dest="frameworks",
        action="append",
        metavar="NAME",
        help="boost chunks tagged with it (x1.25; not a filter); repeatable",
    )
    flag("--top-k", type=int, metavar="N", help="results to return (default 10)")
    flag("--corag", action="store_true", default=None, help="multi-hop retrieval with the LLM")
    flag(
        "--no-user-codebase",
        dest="user_codebase",
        action="store_false",
        default=None,
        help="leave out the user's code (by default it passes any --domain)",
    )
    flag("--index", dest="indexes", action="append", metavar="NAME[,NAME...]", help="default: all")
    flag("--store", metavar="DIR|tidb://...", help="default: RAG_INDEX_DIR, or TiDB if configured")
    flag("--mode", help="hybrid (default), vector or bm25")
    flag("--fusion", help=f"adaptive, weighted or rrf (default {DEFAULT_FUSION})")
    flag("--max-tokens", type=int, metavar="N", help="token budget of the returned chunks")
    flag(
        "--fresh-within", dest="fresh_within_days", type=int, metavar="DAYS", help="verified since"
    )
    flag("--include-deprecated", action="store_true", default=None, help="keep, demoted x0.5")
    flag("--strict", action="store_true", default=None, help="any degradation exits 1")
    flag("--no-rerank", dest="rerank", action="store_false", default=None, help="fused order")
    flag("--no-expand", dest="expand", action="store_false", default=None, help="no variants")
    flag("--no-links", dest="links", action="store_false", default=None, help="no link places")
    flag("--worker", metavar="URL", help="ask a running worker (default RAG_QUERY_WORKER_URL)")
    flag("--json", action="store_true", help="the response as JSON on stdout")
    return p


def request_fields(args: argparse.Namespace) -> dict[str, Any]:
    fields = {k: v for k, v in vars(args).items() if k not in ("worker", "json")}
    for name in ("frameworks", "indexes"):
        if fields[name] is not None:
            fields[name] = ",".join(fields[name])  # "--index a,b --index c" = a, b, c
    return fields


def run(request: QueryRequest, settings: Settings, worker_url: str | None) -> dict[str, Any]:
    """The response dict, from the worker when one is named, else computed here."""
    fallback_note = None
    if worker_url:
        remote = request
        if request.store and "://" not in request.store:
            # The worker resolves paths against its own working directory, not ours.
            remote = request.model_copy(update={"store": str(Path(request.store).resolve())})
        try:
            return remote_answer(worker_url, remote)
        except WorkerUnavailable as exc:
            fallback_note = f"{DEGRADED}{exc}; answered in-process"
    if request.store and "://" not in request.store and not Path(request.store).is_dir():
        raise UsageError(f"no store directory {request.store}")
    engine = Engine.open(settings, request.store)
    try:
        result = answer(request, engine).to_dict()
    finally:
        engine.close()
    if fallback_note:
        result["notes"].insert(0, fallback_note)
    return result


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
    args = build_parser().parse_args(argv)
    try:
        settings = Settings.from_env()
        request = make_request(request_fields(args))
        result = run(request, settings, args.worker or settings.query_worker_url)
    except (UsageError, SettingsError) as exc:
        return error_exit(exc, EXIT_USAGE)
    except StoreError as exc:
        return error_exit(exc, EXIT_FAILURE)
    for note in result.get("notes") or []:
        print(f"note: {note}", file=sys.stderr)
    print(json.dumps(result, ensure_ascii=False) if args.json else render(result))
    code = exit_code(result, request.strict)
    if code and request.strict and is_degraded(result):
        print("error: --strict: the answer is degraded (see the notes above)", file=sys.stderr)
    return code


def serve_main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m query serve", description=serve.__doc__)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8765)
    p.add_argument("--store", metavar="DIR|tidb://...", help="default: RAG_INDEX_DIR or TiDB")
    args = p.parse_args(argv)
    try:
        settings = Settings.from_env()
        if args.store and "://" not in args.store and not Path(args.store).is_dir():
            raise UsageError(f"no store directory {args.store}")
        engine = Engine.open(settings, args.store)
        serve(engine, args.host, args.port, WorkerLimits.from_settings(settings))
    except (UsageError, SettingsError) as exc:
        return error_exit(exc, EXIT_USAGE)
    except (StoreError, OSError) as exc:
        return error_exit(exc, EXIT_FAILURE)
    return 0


def status_main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(
        prog="python -m query status", description="What the store's indexes hold."
    )
    p.add_argument("--store", metavar="DIR|tidb://...", help="default: RAG_INDEX_DIR or TiDB")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    args = p.parse_args(argv)
    try:
        settings = Settings.from_env()
        if args.store and "://" not in args.store and not Path(args.store).is_dir():
            raise UsageError(f"no store directory {args.store}")
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


if __name__ == "__main__":
    sys.exit(main())
