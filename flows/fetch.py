"""`python -m flows.fetch URL... [--index NAME] [--store S] [--max-pages N] [--concurrency N]
[--rate R] [--no-ingest] [--vectors now|later] [--json]`: fetch DocC documentation from the
web and ingest it (`rag-retrieve fetch`).

A URL is a documentation root a person opens: an Apple framework or article
(`https://developer.apple.com/documentation/swiftdata`, whose pages are read from
`/tutorials/data/documentation/…json`) or any DocC site (`https://host/path/documentation/
<module>`, read from `/path/data/documentation/…json`). The crawl follows the topic
references that stay under the root, writes each page under the sources folder
(`RAG_SOURCES_DIR`, default `<data>/sources/<host>/<path>.json`) with a fetch record under
`.fetch/` (URL, final URL, ETag, Last-Modified, when fetched and verified, how it ended),
then ingests the site's folder (not with `--no-ingest`). Running it again is how pages are
updated: each is asked with a conditional request; an unchanged page costs a 304 and nothing
else, a changed one is downloaded and re-ingested alone, one gone (404/410) is removed. A
crawl that was killed resumes where it stopped. Politeness: at most `--concurrency` requests
in flight (default 4) and `--rate` request starts per second (default 2) to the root's host
alone, robots.txt obeyed, retries with backoff that wait out `Retry-After`. The Prefect flow
is flows.fetch_flow; its deployment (`rag-retrieve serve`) starts a backfill from the UI.
"""

from __future__ import annotations

import argparse
import json
import sys

from flows.ingest import ArgumentsRefused, CliParser, positive_int

DEFAULT_CONCURRENCY = 4
DEFAULT_RATE = 2.0


def build_parser() -> argparse.ArgumentParser:
    from chunkers.sources.web.crawl import DEFAULT_MAX_PAGES

    parser = CliParser(prog="python -m flows.fetch", description=__doc__)
    parser.add_argument("urls", nargs="+", help="DocC documentation roots (…/documentation/NAME)")
    parser.add_argument("--index", default="default", help="index name (default: default)")
    parser.add_argument("--store", help="store directory or tidb:// URL")
    parser.add_argument(
        "--max-pages",
        type=positive_int,
        default=DEFAULT_MAX_PAGES,
        help=f"pages per root at most (default {DEFAULT_MAX_PAGES})",
    )
    parser.add_argument(
        "--concurrency",
        type=positive_int,
        default=DEFAULT_CONCURRENCY,
        help=f"requests in flight to the host at most (default {DEFAULT_CONCURRENCY})",
    )
    parser.add_argument(
        "--rate",
        type=float,
        default=DEFAULT_RATE,
        help=f"request starts per second at most (default {DEFAULT_RATE:g})",
    )
    parser.add_argument("--no-ingest", action="store_true", help="fetch only")
    parser.add_argument(
        "--vectors",
        choices=("now", "later"),
        default="now",
        help="as ingest's: later stops once the pages are keyword-searchable",
    )
    parser.add_argument("--json", action="store_true", help="the result as JSON on stdout")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if args.rate <= 0:
            raise ArgumentsRefused(f"--rate {args.rate:g}: use a positive number")
        from chunkers.sources.web.site import SiteError, doc_site

        for url in args.urls:
            doc_site(url)
    except (ArgumentsRefused, SiteError) as exc:
        parser.print_usage(sys.stderr)
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        return 2
    return run(args)


def run(args: argparse.Namespace) -> int:
    from core.cli import EXIT_FAILURE, error_exit
    from core.settings import Settings
    from flows.prefect_api.server import ApiServerError, temporary_api_server
    from loaders.summary import IngestError

    settings = Settings.from_env()
    try:
        with temporary_api_server(settings, lambda: None):
            from flows.fetch_flow import fetch_flow

            result = fetch_flow(
                urls=args.urls,
                index=args.index,
                store=args.store,
                max_pages=args.max_pages,
                concurrency=args.concurrency,
                rate=args.rate,
                ingest=not args.no_ingest,
                defer_vectors=args.vectors == "later",
            )
    except (IngestError, ApiServerError) as exc:
        return error_exit(exc, EXIT_FAILURE)
    if args.json:
        print(json.dumps(result, default=str))
    else:
        print(readable(result))
    stopped = [f for f in result["fetch"] if f["stopped"]]
    return EXIT_FAILURE if stopped else 0


def readable(result: dict) -> str:
    lines = []
    for f in result["fetch"]:
        lines.append(
            f"{f['root']}: {f['pages']} pages — {f['downloaded']} downloaded, "
            f"{f['unchanged']} unchanged, {f['resumed']} resumed, {f['gone']} gone, "
            f"{len(f['rejected'])} rejected, {len(f['unverified'])} unverified; "
            f"{f['requests']} requests in {f['seconds']} s"
        )
        lines += [f"  rejected: {r['url']}: {r['reason']}" for r in f["rejected"]]
        lines += [f"  unverified: {r['url']}: {r['reason']}" for r in f["unverified"]]
        if f["truncated"]:
            lines.append("  stopped at --max-pages: raise it to fetch the rest")
        if f["stopped"]:
            lines.append(f"  stopped: {f['stopped']}")
    for summary in result["ingest"]:
        lines.append(
            f"ingested into {summary.get('index')}: {summary.get('docs_new', 0)} new, "
            f"{summary.get('docs_changed', 0)} changed, {summary.get('docs_deleted', 0)} "
            f"deleted, {summary.get('chunks_written', 0)} chunks written"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
