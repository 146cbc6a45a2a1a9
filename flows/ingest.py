"""Ingest corpora into one index, incrementally: `python -m flows.ingest`.

`python -m flows.ingest PATH... [--index NAME] [--store DIR] [--domain D] [--source S]
[--force] [--vectors now|later] [--lock] [--within DIR]... [--json] [--verbose]
[--executor local|dask|endpoints] [--dask-address tcp://HOST:8786] [--workers N]
[--endpoints URL[,URL...]]` runs the ingest flow (flows/ingest_flow.py) in Prefect's local
mode (no server to run yourself), in two phases: the lexical phase loads chunks, keyword index
and symbols (the corpus answers keyword questions when it ends), then the vector phase embeds
them, a page per commit. With `--vectors later` the run stops after the first, with no model
loaded; `python -m flows.embed` runs the second. Without a configured Prefect API the lexical
phase runs while Prefect's temporary server starts, before the flow (flows/ingest_run.py).
`--executor dask` spreads the vector phase over a Dask cluster, `--executor endpoints` over a
pool of embedding servers (docs/scaling.md). With `--watch` (directories only) it ingests, then
keeps the index in step with every change until Ctrl-C (flows/watch.py).

Rejected records and errors are written for people on stderr (`rejected: FILE:LINE: REASON`,
`error: MESSAGE`). With `--json`, stdout carries the same facts for programs as JSON lines,
each an object with a `"kind"`: `"reject"` lines, then the `"summary"` (the last line of a run
that finished); under `--watch` a `"run"` line per run and the `"totals"` when it stops; an
`"error"` line (`message`, `exit_code`) last when the command fails, bad arguments included.
The schema is core/ingest_lines.py's; programs read that, never stderr's wording.
"""

# Only the standard library at the top: `--help` and argument errors must not wait for
# Prefect, pydantic or the ingest stack to import (seconds on a loaded laptop); each is
# imported where it is first needed.
from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from core.settings import Settings


class ArgumentsRefused(Exception):
    """argparse's usage error, raised rather than exited on, so that main() can also report
    it as a JSON error line when --json was given."""


class CliParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise ArgumentsRefused(message)


def build_parser() -> argparse.ArgumentParser:
    parser = CliParser(prog="python -m flows.ingest", description=__doc__)
    parser.add_argument("paths", nargs="*", help="JSONL files, globs or directories")
    parser.add_argument(
        "--xcode-docs",
        action="store_true",
        help="also ingest the guides Xcode ships for its coding assistant (macOS, Xcode 26+: "
        "every installed Xcode's AdditionalDocumentation folder); exit 2 when none is found",
    )
    parser.add_argument("--index", default="default", help="index name (default: default)")
    parser.add_argument("--store", help="store directory or tidb:// URL")
    parser.add_argument("--domain", help="domain for records that do not name one")
    parser.add_argument("--source", help="source for records that do not name one")
    parser.add_argument("--force", action="store_true", help="re-chunk and re-embed everything")
    parser.add_argument(
        "--vectors",
        choices=("now", "later"),
        default="now",
        help="now (default): embed the chunks after loading them; later: stop once they are "
        "keyword-searchable and leave the embedding to `rag-retrieve embed` (overnight, or "
        "on another machine)",
    )
    parser.add_argument(
        "--within",
        action="append",
        default=[],
        metavar="DIR",
        help="read only files whose real path (links followed) lies inside DIR (repeatable); "
        "files outside are skipped and counted, and a file named like a credential is "
        "skipped even when named by its path (the MCP ingest tool's confinement)",
    )
    parser.add_argument(
        "--lock",
        action="store_true",
        help="hold the index's write slot (index-write:NAME, as the deployments do) while "
        "writing, so that no other locked run writes the same index meanwhile",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="JSON lines on stdout: rejects, then the summary last (with --watch: one line "
        "per run, the totals last); on failure an error line last",
    )
    parser.add_argument(
        "--watch",
        action="store_true",
        help="after the ingest, re-ingest changed files within seconds and prune deleted "
        "ones until Ctrl-C or SIGTERM (directories only; --force applies to the first run)",
    )
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="let the model libraries' progress bars and logs through to stderr "
        "(RAG_LIBRARY_LOGS=true does the same)",
    )
    add_executor_arguments(parser)
    return parser


def add_executor_arguments(parser: argparse.ArgumentParser) -> None:
    """Where the vector phase runs (RAG_VECTOR_EXECUTOR, RAG_DASK_ADDRESS, RAG_DASK_WORKERS,
    RAG_EMBEDDING_ENDPOINTS)."""
    parser.add_argument(
        "--executor",
        choices=("local", "dask", "endpoints"),
        help="where the vector phase embeds: local (this process; the default), dask (a "
        "Dask cluster through Prefect's task runner; needs `pip install "
        "'rag-retrieve[dask]'`) or endpoints (a pool of embedding servers); docs/scaling.md",
    )
    parser.add_argument(
        "--endpoints",
        metavar="URL[,URL...]",
        help="with --executor endpoints: the embedding servers (OpenAI-compatible "
        "/v1/embeddings) to spread the shards over",
    )
    parser.add_argument(
        "--dask-address",
        metavar="tcp://HOST:8786",
        help="with --executor dask: the scheduler of a running cluster",
    )
    parser.add_argument(
        "--workers",
        type=positive_int,
        metavar="N",
        help="with --executor dask and no address: a temporary cluster of N single-threaded "
        "worker processes on this machine (default 2)",
    )


def positive_int(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text}: use a positive number")
    return value


def executor_settings(args: argparse.Namespace, **overrides: Any) -> Settings:
    """The settings with the command's executor flags; IngestUsageError (exit 2) for flags the
    executor cannot use, or an executor whose extra is not installed."""
    from core.settings import Settings
    from loaders.executors import check_executor
    from loaders.summary import IngestUsageError

    settings = Settings.from_env(
        vector_executor=args.executor,
        dask_address=args.dask_address,
        dask_workers=args.workers,
        embedding_endpoints=args.endpoints,
        **overrides,
    )
    if settings.vector_executor != "dask" and (args.dask_address or args.workers):
        raise IngestUsageError("--dask-address and --workers need --executor dask")
    if settings.vector_executor != "endpoints" and args.endpoints:
        raise IngestUsageError("--endpoints needs --executor endpoints")
    check_executor(settings)
    return settings


def preparation(settings: Settings, flow_module: str, *, model: bool = True) -> Callable[[], None]:
    """What a command does while Prefect's temporary server starts (`temporary_api_server`):
    with `model`, fetch and load the model (`prepare_model`; kept for the flow inside
    `kept_embedders()`), and import the flow's module (a second or more of imports of its
    own). Without `model` (`--vectors later`) no model is loaded, nor its runtime imported."""
    from loaders.preflight import prepare_model

    def prepare() -> None:
        if model:
            prepare_model(settings)
        importlib.import_module(flow_module)

    return prepare


def parse(parser: argparse.ArgumentParser, argv: list[str] | None) -> argparse.Namespace | int:
    """The arguments, or exit status 2 with what argparse prints itself and, under --json,
    the error line a program reads."""
    try:
        args = parser.parse_args(argv)
        # `paths` may be empty only where --xcode-docs names the folders (flows.embed has
        # neither).
        if getattr(args, "xcode_docs", True) is False and not args.paths:
            raise ArgumentsRefused("the following arguments are required: paths")
        return args
    except ArgumentsRefused as exc:
        parser.print_usage(sys.stderr)
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        if "--json" in (sys.argv[1:] if argv is None else argv):
            from core.ingest_lines import error_line

            print(error_line(str(exc), 2), flush=True)
        return 2


def main(argv: list[str] | None = None) -> int:
    args = parse(build_parser(), argv)
    if isinstance(args, int):
        return args
    from core.ingest_lines import error_line

    try:
        return run(args)
    except Exception as exc:
        # Unforeseen: the traceback is for people; a program still gets its error line.
        if args.json:
            print(error_line(f"{type(exc).__name__}: {exc}", 1), flush=True)
        raise


def run(args: argparse.Namespace) -> int:
    from chunkers.sources.discovery import SourceError, named_credentials
    from core.cli import EXIT_FAILURE, EXIT_USAGE, error_exit
    from core.embedding.runtimes import kept_embedders
    from core.ingest_lines import error_line
    from core.settings import SettingsError
    from flows.ingest_run import run_flow
    from flows.prefect_api.server import ApiServerError, starting_api
    from loaders.preflight import preflight
    from loaders.summary import IngestError, IngestUsageError
    from loaders.target import IngestTarget

    target = IngestTarget(
        args.index,
        args.store,
        args.domain,
        args.source,
        args.force,
        tuple(args.within),
        defer_vectors=args.vectors == "later",
    )
    try:
        if args.xcode_docs:
            from chunkers.sources.xcode import xcode_guide_folders

            args.paths = [*args.paths, *(str(p) for p in xcode_guide_folders())]
        settings = executor_settings(args, library_logs=args.verbose or None)
        preflight(settings, args.paths, target)
        if not args.within and not settings.ingest_secrets:
            for named in named_credentials(args.paths):
                print(f"warning: {named}: read as named, credential or not", file=sys.stderr)
        # Prefect only now: a run that cannot start has said so without paying for it.
        if args.watch:
            from loaders.watch import watched_roots

            watched_roots(args.paths)  # a file or a glob: refused before Prefect starts
            from flows.watch import watch_cli

            return watch_cli(args, target, settings)
        with kept_embedders(), starting_api(settings) as start:
            result = run_flow(args, settings, target, start)
    except (IngestError, SourceError, SettingsError, ApiServerError) as exc:
        usage = isinstance(exc, (IngestUsageError, SourceError, SettingsError))
        code = EXIT_USAGE if usage else EXIT_FAILURE
        if args.json:
            print(error_line(str(exc), code), flush=True)
        return error_exit(exc, code)
    return print_result(result, as_json=args.json)


def print_result(result: dict[str, Any], *, as_json: bool) -> int:
    """A finished run's rejects and summary, for people or (`as_json`) programs; its exit
    status: 1 when something was rejected."""
    from core.ingest_lines import BREAKDOWN_KEYS, SUMMARY, encode, reject_line, where
    from loaders.summary import SUMMARY_KEYS

    for reject in result["rejects"]:
        print(f"rejected: {where(reject)}: {reject['reason']}", file=sys.stderr)
        if as_json:
            print(reject_line(reject))
    if as_json:
        fields = {key: result[key] for key in SUMMARY_KEYS + BREAKDOWN_KEYS}
        fields["stages"] = result["timings"]
        if "phases" in result:
            fields["phases"] = result["phases"]
        if result.get("vector_shards"):
            fields["vector_shards"] = result["vector_shards"]
        print(encode(SUMMARY, fields))
    else:
        print(human_summary(result))
    return 1 if result["docs_rejected"] else 0


def human_summary(result: dict[str, Any]) -> str:
    lines = [
        f"index {result['index']} in {result['store']}: {result['docs_seen']} documents seen — "
        f"{result['docs_new']} new, {result['docs_changed']} changed, "
        f"{result['docs_unchanged']} unchanged, {result['docs_deleted']} deleted, "
        f"{result['docs_rejected']} rejected",
        f"chunks: {result['chunks_written']} written, {result['chunks_deleted']} deleted, "
        f"{result['chunks_embedded']} embedded, {result['embedding_cache_hits']} from cache",
        "stages: "
        + ", ".join(f"{k} {v:.2f}s" for k, v in result["timings"].items())
        + f"; total {result['seconds']:.2f}s",
    ]
    if phases := result.get("phases"):
        lines.append(phases_line(phases))
    lines.append(vector_line(result))
    if shards := result.get("vector_shards"):
        lines.append(
            f"shards ({shards['executor']}): {shards['shards']} run, {shards['failed']} failed, "
            f"{shards['resubmitted']} resubmitted"
        )
        lines.extend(
            f"shard {r['shard']} failed after {r['attempts']} attempts: {r['error']}"
            for r in shards["reports"]
            if not r["ok"]
        )
    if languages := result.get("chunks_by_language"):
        lines.append("chunks by language: " + ", ".join(f"{k} {n}" for k, n in languages.items()))
    if skipped := result.get("skipped_by_type"):
        lines.append("skipped by type: " + ", ".join(f"{n} {k}" for k, n in skipped.items()))
    if result.get("rejects_file"):
        lines.append(f"rejects written to {result['rejects_file']}")
    if calibration := result.get("calibration"):
        lines.append(
            f"fusion calibration skipped: {calibration['error']}"
            if "error" in calibration
            else f"fusion: {calibration['rule']} ({calibration['reason']})"
        )
    lines.extend(f"note: {n}" for n in result.get("notes", []))
    return "\n".join(lines)


def phases_line(phases: dict[str, float | None]) -> str:
    """Where the command's time went, and when its index first answered."""
    shown = ", ".join(
        f"{name} {seconds:.2f}s"
        for name, seconds in phases.items()
        if seconds is not None and name not in ("total", "searchable", "api_start")
    )
    line = f"phases: {shown}; total {phases['total']:.2f}s"
    if phases.get("searchable") is not None:
        line += f"; keyword answers after {phases['searchable']:.2f}s"
    if phases.get("api_start") is not None:
        line += f" (Prefect's temporary server took {phases['api_start']:.2f}s to start)"
    return line


def vector_line(result: dict[str, Any]) -> str:
    """How much of the index has vectors, and what to run when some chunks wait."""
    pending = result.get("chunks_pending", 0)
    if not pending:
        return "vectors: every chunk has one"
    # vector_coverage is rounded down (core/store/coverage.py): below 100% while any wait.
    share = result.get("vector_coverage", 0.0)
    whole = int(share * 100)
    shown = "under 1%" if whole == 0 and share > 0 else f"{whole}%"
    return (
        f"vectors: {shown} of the index's chunks ({pending} wait; keyword "
        f"search is complete): `rag-retrieve embed --index {result['index']}` embeds them"
    )


if __name__ == "__main__":
    sys.exit(main())
