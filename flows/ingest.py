"""The ingest flow and its CLI: `loaders.ingest` with each stage run as a Prefect task.

`python -m flows.ingest PATH... [--index NAME] [--store DIR] [--domain D] [--source S]
[--force] [--lock] [--json]` runs it in Prefect's local mode (no server to run yourself).
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import json
import sys
from collections.abc import Callable
from dataclasses import asdict
from functools import partial
from typing import Any, TypeVar

from prefect import flow, get_run_logger, task
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NO_CACHE

from chunkers.sources.discovery import SourceError
from core.cli import EXIT_FAILURE, EXIT_USAGE, error_exit
from core.settings import Settings, SettingsError
from flows.index_lock import index_slot
from flows.prefect_api.server import ApiServerError, temporary_api_server
from loaders.ingest import ingest
from loaders.preflight import preflight
from loaders.stages import embedding_text
from loaders.summary import SUMMARY_KEYS, IngestError, IngestSummary, IngestUsageError

__all__ = [
    "SUMMARY_KEYS",
    "IngestError",
    "IngestSummary",
    "embedding_text",
    "ingest_flow",
    "main",
    "preflight",
    "run_ingest",
]

T = TypeVar("T")


def prefect_stage(name: str, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """Run one stage of `loaders.ingest` as a Prefect task, its progress in the run's log.

    Resumability comes from our own Parquet staging; Prefect's result caching would try (and
    fail, noisily) to hash the stores and caches passed as stage inputs, so it is off."""
    takes_log = "log" in inspect.signature(fn).parameters

    def body(*a: Any, **k: Any) -> T:
        if takes_log:
            k.setdefault("log", get_run_logger())
        return fn(*a, **k)

    body.__name__ = body.__qualname__ = fn.__name__
    stage_task: Any = task(name=name, cache_policy=NO_CACHE)(body)
    result: T = stage_task(*args, **kwargs)
    return result


# `loaders.ingest.ingest` with Prefect tasks for its stages; same arguments (see there).
run_ingest = partial(ingest, run_stage=prefect_stage)


@flow(name="ingest", log_prints=True)
def ingest_flow(
    paths: list[str],
    index: str = "default",
    store: str | None = None,
    domain: str | None = None,
    source: str | None = None,
    force: bool = False,
    embedding_model: str | None = None,
    lock: bool = False,
) -> dict[str, Any]:
    """Ingest corpora into one index, incrementally: only new and changed documents are
    chunked and embedded, vanished ones are pruned, unchanged ones cost a stat or a hash.
    With `lock`, under the index's write slot, as the deployments' runs."""
    settings = Settings.from_env(embedding_model=embedding_model)
    with index_slot(index) if lock else contextlib.nullcontext():
        summary = run_ingest(
            paths, settings, index=index, store=store, domain=domain, source=source, force=force
        )
    create_markdown_artifact(
        key=f"ingest-{_artifact_key(index)}",
        markdown=summary_markdown(summary),
        description=f"Ingest summary for index {index}",
    )
    return asdict(summary)


def summary_markdown(summary: IngestSummary) -> str:
    rows = "\n".join(f"| {key} | {value} |" for key, value in summary.counts().items())
    timings = "\n".join(f"| {k} | {v:.3f} |" for k, v in summary.timings.items())
    text = (
        f"# Ingest into `{summary.index}` ({summary.store})\n\n"
        f"| count | value |\n|---|---|\n{rows}\n\n"
        f"| stage | seconds |\n|---|---|\n{timings}\n"
    )
    if summary.rejects:
        listed = "\n".join(
            f"| {r['file']} | {r['line'] or ''} | {r.get('field') or ''} | {r['reason']} |"
            for r in summary.rejects[:200]
        )
        text += f"\n## Rejects\n\n| file | line | field | reason |\n|---|---|---|---|\n{listed}\n"
    if summary.notes:
        text += "\n## Notes\n\n" + "\n".join(f"- {n}" for n in summary.notes) + "\n"
    return text


def _artifact_key(index: str) -> str:
    # Artifact keys allow lowercase letters, digits and dashes only.
    return "".join(ch if ch.isalnum() else "-" for ch in index.lower()).strip("-") or "index"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m flows.ingest", description=__doc__)
    parser.add_argument("paths", nargs="+", help="JSONL files, globs or directories")
    parser.add_argument("--index", default="default", help="index name (default: default)")
    parser.add_argument("--store", help="store directory or tidb:// URL")
    parser.add_argument("--domain", help="domain for records that do not name one")
    parser.add_argument("--source", help="source for records that do not name one")
    parser.add_argument("--force", action="store_true", help="re-chunk and re-embed everything")
    parser.add_argument(
        "--lock",
        action="store_true",
        help="hold the index's write slot (index-write:NAME, as the deployments do) while "
        "writing, so that no other locked run writes the same index meanwhile",
    )
    parser.add_argument("--json", action="store_true", help="last line: the summary as JSON")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        settings = Settings.from_env()
        preflight(settings, args.paths, args.store, args.index, args.domain)
        with temporary_api_server(settings):
            result = ingest_flow(
                paths=args.paths,
                index=args.index,
                store=args.store,
                domain=args.domain,
                source=args.source,
                force=args.force,
                lock=args.lock,
            )
    except (IngestError, SourceError, SettingsError) as exc:
        usage = isinstance(exc, (IngestUsageError, SourceError, SettingsError))
        return error_exit(exc, EXIT_USAGE if usage else EXIT_FAILURE)
    except ApiServerError as exc:
        return error_exit(exc, EXIT_FAILURE)
    for reject in result["rejects"]:
        where = f"{reject['file']}:{reject['line']}" if reject["line"] else reject["file"]
        print(f"rejected: {where}: {reject['reason']}", file=sys.stderr)
    if args.json:
        print(json.dumps({key: result[key] for key in SUMMARY_KEYS}))
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
    if result.get("rejects_file"):
        lines.append(f"rejects written to {result['rejects_file']}")
    lines.extend(f"note: {n}" for n in result.get("notes", []))
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
