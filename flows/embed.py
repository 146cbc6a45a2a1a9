"""Embed what an index holds without vectors: `python -m flows.embed` (`rag-retrieve embed`).

`python -m flows.embed [--index NAME] [--store DIR] [--lock] [--json] [--verbose]
[--executor local|dask|endpoints] [--dask-address tcp://HOST:8786] [--workers N]
[--endpoints URL[,URL...]]` runs the embed-pending flow (flows/embed_flow.py): an ingest's vector phase alone, over the chunks that
have no vector yet (`ingest --vectors later`, or an ingest stopped while embedding). It
resumes wherever the last run stopped, commits a page of vectors at a time, and with nothing
pending does nothing, so it is safe to run at any time. Keyword search works throughout.
`--executor dask` spreads it over a Dask cluster and `--executor endpoints` over a pool of
embedding servers, in shards each loaded exactly once (loaders/sharded.py, docs/scaling.md).

Output follows `python -m flows.ingest`: readable text, or with `--json` the `"summary"` line
(core/ingest_lines.py) with `chunks_pending` and `vector_coverage`; errors on stderr, exit 2
for a bad argument (an unknown index is one), 1 for a failure or a document the model gives
no usable vector.
"""

# Only the standard library at the top, as in flows/ingest.py.
from __future__ import annotations

import argparse
import sys

from flows.ingest import (
    CliParser,
    add_executor_arguments,
    executor_settings,
    parse,
    preparation,
    print_result,
)


def build_parser() -> argparse.ArgumentParser:
    parser = CliParser(prog="python -m flows.embed", description=__doc__)
    parser.add_argument("--index", default="default", help="index name (default: default)")
    parser.add_argument("--store", help="store directory or tidb:// URL")
    parser.add_argument(
        "--lock",
        action="store_true",
        help="hold the index's write slot (index-write:NAME) while writing, as the deployments do",
    )
    parser.add_argument("--json", action="store_true", help="the summary as a JSON line")
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="let the model libraries' progress bars and logs through to stderr",
    )
    add_executor_arguments(parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = parse(build_parser(), argv)
    return args if isinstance(args, int) else run(args)


def run(args: argparse.Namespace) -> int:
    from core.cli import EXIT_FAILURE, EXIT_USAGE, error_exit
    from core.embedding.runtimes import kept_embedders
    from core.ingest_lines import error_line
    from core.settings import SettingsError
    from flows.prefect_api.server import ApiServerError, temporary_api_server
    from loaders.preflight import check_model, close_target, hold_points, open_existing
    from loaders.summary import IngestError, IngestUsageError
    from loaders.target import IngestTarget

    target = IngestTarget(args.index, args.store)
    try:
        settings = executor_settings(args, library_logs=args.verbose or None)
        check_model(settings, fetch=False)
        hold_points(settings)
        # An unknown index or a bad store is refused before Prefect starts.
        the_store, index = open_existing(settings, target.store, target.index)
        close_target(the_store, index, target.index, created=False)
        with (
            kept_embedders(),
            temporary_api_server(settings, preparation(settings, "flows.embed_flow")),
        ):
            from flows.embed_flow import embed_pending_flow

            result = embed_pending_flow(
                index=target.index,
                store=target.store,
                library_logs=settings.library_logs,
                lock=args.lock,
                executor=settings.vector_executor,
                dask_address=settings.dask_address,
                dask_workers=settings.dask_workers,
                endpoints=settings.embedding_endpoints,
            )
    except (IngestError, SettingsError, ApiServerError) as exc:
        usage = isinstance(exc, (IngestUsageError, SettingsError))
        code = EXIT_USAGE if usage else EXIT_FAILURE
        if args.json:
            print(error_line(str(exc), code), flush=True)
        return error_exit(exc, code)
    return print_result(result, as_json=args.json)


if __name__ == "__main__":
    sys.exit(main())
