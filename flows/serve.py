"""Serve the operations deployments against the configured Prefect API.

`python -m flows.serve` registers and runs five deployments until interrupted:

- refresh/refresh     one cron schedule per corpus (its `refresh_schedule`): incremental ingest
- backfill/backfill   no schedule: one-off runs from the UI's run form (typed parameters)
- reverify/reverify   one cron schedule per corpus with a `reverify_schedule`
- fetch/fetch         no schedule: fetch DocC documentation roots from the web (Apple's
                      docs, any DocC site) and ingest them, from the UI's run form
- embed-pending/embed-pending  no schedule: an index's vector phase alone, for the chunks a
                      `--vectors later` ingest or backfill left keyword-only

`python -m flows.serve --check` validates the corpora file and prints the schedules instead.
The corpora file is `RAG_CORPORA_FILE` (default data/corpora.toml); the API is Prefect's own
`PREFECT_API_URL` (a local `prefect server start`, Prefect Cloud or a self-hosted server).
"""

# Only the standard library at the top: `--help` and argument errors must not wait for
# Prefect and the flows to import; they are imported where first needed.
from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from prefect.deployments.runner import RunnerDeployment
    from prefect.schedules import Schedule

    from flows.corpora import Corpus

TAGS = ["rag-retrieve"]


def build_deployments(corpora: dict[str, Corpus]) -> list[RunnerDeployment]:
    """The five deployments, with one schedule per corpus and flow (corpus as parameter)."""
    from prefect.deployments.runner import EntrypointType, RunnerDeployment

    from flows.backfill import backfill_flow
    from flows.embed_flow import embed_pending_flow
    from flows.fetch_flow import fetch_flow
    from flows.refresh import refresh_flow
    from flows.reverify import reverify_flow

    # Module entrypoints: the flow runs import `flows.*` whatever directory serve starts in.
    common: dict[str, Any] = {"tags": TAGS, "entrypoint_type": EntrypointType.MODULE_PATH}
    made = [
        refresh_flow.to_deployment(
            name="refresh",
            description="Incremental refresh of one corpus (or all): only changed documents "
            "are re-embedded, vanished ones pruned. Scheduled per corpus.",
            schedules=schedules_for(corpora, "refresh"),
            **common,
        ),
        backfill_flow.to_deployment(
            name="backfill",
            description="One-off ingest of any paths into an index, started from the UI.",
            **common,
        ),
        reverify_flow.to_deployment(
            name="reverify",
            description="Freshness re-verification: documents older than the corpus's window "
            "are checked against their source (unchanged, changed, gone).",
            schedules=schedules_for(corpora, "reverify"),
            **common,
        ),
        fetch_flow.to_deployment(
            name="fetch",
            description="Fetch DocC documentation roots (https://developer.apple.com/"
            "documentation/swiftdata, or any DocC site's …/documentation/<module>) politely and "
            "resumably, and ingest them; run again, it asks each page conditionally.",
            **common,
        ),
        embed_pending_flow.to_deployment(
            name="embed-pending",
            description="Embed the chunks an index holds without vectors (a backfill with "
            "`vectors_later`, or a run stopped while embedding); keyword search works "
            "meanwhile. Resumable, and safe to start at any time.",
            parameters={"lock": True},
            **common,
        ),
    ]
    # Prefect types to_deployment for async callers too; called from sync code it returns
    # the deployment itself.
    return [d for d in made if isinstance(d, RunnerDeployment)]


def schedules_for(corpora: dict[str, Corpus], flow_name: str) -> list[Schedule]:
    from prefect.schedules import Cron

    return [
        Cron(cron, timezone=corpus.timezone, parameters={"corpus": corpus.name})
        for corpus in corpora.values()
        for name, cron in corpus.schedules()
        if name == flow_name
    ]


def describe(corpora: dict[str, Corpus]) -> str:
    lines = []
    for corpus in corpora.values():
        where = corpus.paths if corpus.kind == "files" else corpus.roots
        lines.append(f"corpus {corpus.name} → index {corpus.index}: {', '.join(where)}")
        for name, cron in corpus.schedules():
            lines.append(f"  {name}: {cron} ({corpus.timezone})")
        lines.append(f"  fresh for {corpus.freshness_days} days")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m flows.serve", description=__doc__)
    parser.add_argument(
        "--check", action="store_true", help="validate the corpora file, print it, exit"
    )
    parser.add_argument(
        "--limit", type=int, default=None, help="most flow runs at once (default: no limit)"
    )
    args = parser.parse_args(argv)
    from core.cli import EXIT_USAGE, error_exit
    from core.settings import Settings, SettingsError
    from flows.corpora import CorporaError, load_corpora
    from flows.index_lock import ensure_index_limit

    try:
        settings = Settings.from_env()
        corpora = load_corpora(settings.corpora_file)
    except (CorporaError, SettingsError) as exc:
        return error_exit(exc, EXIT_USAGE)
    print(describe(corpora))
    if args.check:
        return 0
    from prefect import serve

    for index in sorted({c.index for c in corpora.values()}):
        ensure_index_limit(index)
    serve(*build_deployments(corpora), limit=args.limit)
    return 0


if __name__ == "__main__":
    sys.exit(main())
