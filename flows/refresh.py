"""The refresh flow: each configured corpus re-read incrementally into its index (only
changed documents re-embedded, vanished ones pruned), one writer per index at a time. A
corpus of kind docc is fetched first (flows/fetch_flow.py): every page of its roots asked
with a conditional request, new pages under a root fetched, so that the ingest after it
re-reads only what changed upstream."""

from __future__ import annotations

from typing import Any

from prefect import flow, get_run_logger

from core.settings import Settings
from flows.corpora import Corpus, load_corpora, select
from flows.fetch_flow import fetch_counts, fetch_root, politeness_of
from flows.index_lock import index_slot
from flows.ingest_flow import run_ingest
from flows.run_report import RunReport, reported


@flow(name="refresh", log_prints=True)
def refresh_flow(corpus: str | None = None) -> dict[str, Any]:
    """Refresh corpora from the corpora file incrementally.

    Args:
        corpus: Name of a corpus in the corpora file; empty refreshes every corpus.
    """
    settings = Settings.from_env()
    corpora = select(load_corpora(settings.corpora_file), corpus, settings.corpora_file)
    results: dict[str, Any] = {}
    failed: list[str] = []
    for each in corpora:
        try:
            results[each.name] = refresh_corpus(each, settings)
        except Exception as exc:  # one broken corpus must not starve the others
            get_run_logger().error("refresh of corpus %s failed: %s", each.name, exc)
            failed.append(each.name)
    if failed:
        raise RuntimeError(f"refresh failed for corpus {', '.join(failed)} (see the artifacts)")
    return results


def refresh_corpus(corpus: Corpus, settings: Settings) -> dict[str, Any]:
    """One corpus's incremental ingest, under its index's write slot, with its artifact."""
    report = RunReport(f"Refresh of corpus `{corpus.name}` into index `{corpus.index}`")
    with reported(report, f"refresh-{corpus.name}", f"Refresh of corpus {corpus.name}"):
        with index_slot(corpus.index) as slot:
            report.slot = slot
            if corpus.kind == "docc":
                for site in corpus.sites():
                    fetched = fetch_root(site, settings, politeness_of(corpus), corpus.max_pages)
                    report.counts.update(fetch_counts(fetched, prefix=f"{site.root_url}: "))
                    report.notes.extend(f"rejected: {u}: {r}" for u, r in fetched.rejected)
            summaries = [
                run_ingest(p, settings, t) for p, t in corpus.ingests(settings.sources_dir)
            ]
        for number, summary in enumerate(summaries, start=1):
            report.add_ingest(summary, prefix=f"ingest {number}: " if len(summaries) > 1 else "")
    return report.result()
