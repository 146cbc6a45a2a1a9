"""The reverify flow: documents whose `last_verified` is older than their corpus's freshness
window are checked against their source. Unchanged → `last_verified` moves to today;
changed → re-ingested; gone → removed; unreadable now (a broken record) → kept as it was.

A corpus of kind docc is checked against the web: each stale page is asked once with a
conditional request (chunkers/sources/web/crawl.py's `revalidate`). 304 or the same body →
unchanged; a new body → the page is rewritten and re-ingested; 404/410 → removed; no
answer (a transport failure, a host that keeps failing, a rejected answer) → kept and
counted as unverified.

Re-ingestion goes through the incremental ingest of the whole corpus, so a reverify that
finds work also picks up whatever else changed since the last refresh.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from dataclasses import dataclass, field, replace
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger

from chunkers.model import sha256_hex
from chunkers.sources.discovery import SourceFile, discover
from chunkers.sources.reading import Defaults, read_source
from chunkers.sources.web.crawl import revalidate
from chunkers.sources.web.polite import user_agent
from chunkers.sources.web.site import DocSite, page_of
from core.settings import Settings
from core.store.contract import DocState, IndexStore, UnknownIndex
from core.store.open import open_store
from flows.corpora import Corpus, load_corpora, select
from flows.fetch_flow import politeness_of
from flows.index_lock import index_slot
from flows.ingest_flow import run_ingest
from flows.run_report import RunReport, reported
from loaders.changes import Scope
from loaders.summary import IngestSummary


@dataclass
class Verdicts:
    """Stale documents sorted by what their source says now."""

    unchanged: list[str] = field(default_factory=list)
    changed: dict[str, str] = field(default_factory=dict)  # doc_id -> hash at the source
    gone: list[str] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)
    unverified: list[str] = field(default_factory=list)  # docc: the web gave no answer
    rejects: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class ReverifyResult:
    in_corpus: int = 0
    stale: int = 0
    verdicts: Verdicts = field(default_factory=Verdicts)
    ingests: list[IngestSummary] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        return {
            "documents_in_corpus": self.in_corpus,
            "stale_checked": self.stale,
            "fresh_skipped": self.in_corpus - self.stale,
            "unchanged_reverified": len(self.verdicts.unchanged),
            "changed_reingested": len(self.verdicts.changed),
            "gone_removed": len(self.verdicts.gone),
            "unreadable_kept": len(self.verdicts.unreadable),
            "unverified_kept": len(self.verdicts.unverified),
        }


def run_reverify(corpus: Corpus, settings: Settings, today: date) -> ReverifyResult:
    """Check the corpus's stale documents against their files and act on each verdict."""
    result = ReverifyResult()
    try:
        target = open_store(None, settings).open_index(corpus.index, write=True)
    except UnknownIndex:
        result.notes.append(f"index {corpus.index!r} does not exist yet: nothing to verify")
        return result
    try:
        scope = Scope([p for paths, _ in corpus.ingests(settings.sources_dir) for p in paths])
        states = {d: s for d, s in target.document_states().items() if scope.covers(s.source_path)}
        cutoff = (today - timedelta(days=corpus.freshness_days)).isoformat()
        stale = {d: s for d, s in states.items() if (s.last_verified or "")[:10] < cutoff}
        result.in_corpus, result.stale = len(states), len(stale)
        if corpus.kind == "docc":
            result.verdicts = judge_pages(corpus, settings, stale)
        else:
            result.verdicts = judge(corpus, settings, stale)
        act(corpus, settings, target, result, today)
    finally:
        target.close()
    return result


def judge(corpus: Corpus, settings: Settings, stale: dict[str, DocState]) -> Verdicts:
    """Read every file that holds a stale document, once, and compare content hashes."""
    verdicts = Verdicts()
    defaults = Defaults(
        corpus.source, corpus.domain, settings.max_document_bytes, settings.docc_base_url
    )
    # Discovery, not the stored path, decides the file's root: plain files' ids depend on it.
    discovered = discover(corpus.paths, secrets=settings.ingest_secrets)
    sources = {str(s.path.resolve()): s for s in discovered}
    by_file: dict[str, list[str]] = defaultdict(list)
    for doc_id, state in stale.items():
        by_file[state.source_path or ""].append(doc_id)
    for file, doc_ids in sorted(by_file.items()):
        source = sources.get(file)
        if source is None:
            verdicts.gone.extend(doc_ids)
            continue
        read = read_source(source, defaults)
        found = {doc.doc_id: doc.content_hash for doc in read.documents}
        for doc_id in doc_ids:
            if doc_id in found:
                if found[doc_id] == stale[doc_id].content_hash:
                    verdicts.unchanged.append(doc_id)
                else:
                    verdicts.changed[doc_id] = found[doc_id]
            elif read.rejects:
                # Maybe the broken record is this one: keep the last good version.
                verdicts.unreadable.append(doc_id)
            else:
                verdicts.gone.append(doc_id)
        if read.rejects and any(d not in found for d in doc_ids):
            verdicts.rejects.extend(r.to_dict() for r in read.rejects)
    return verdicts


def judge_pages(corpus: Corpus, settings: Settings, stale: dict[str, DocState]) -> Verdicts:
    """Ask the web about every stale page of a docc corpus, once each, conditionally."""
    verdicts = Verdicts()
    sites, sources = corpus.sites(), settings.sources_dir
    by_site: dict[DocSite, dict[str, list[str]]] = {}
    for doc_id, state in stale.items():
        found = page_of(sites, sources, Path(state.source_path)) if state.source_path else None
        if found is None:  # no root of the corpus covers it any more
            verdicts.gone.append(doc_id)
            continue
        site, doc = found
        by_site.setdefault(site, {}).setdefault(doc, []).append(doc_id)
    agent = user_agent(settings.fetch_contact)
    for site, docs in by_site.items():
        asked = asyncio.run(revalidate(site, sources, politeness_of(corpus), agent, sorted(docs)))
        downloaded, unchanged, gone = set(asked.downloaded), set(asked.unchanged), set(asked.gone)
        for doc, doc_ids in docs.items():
            if doc in downloaded:
                text = site.page_file(sources, doc).read_text(encoding="utf-8", errors="replace")
                verdicts.changed.update({d: sha256_hex(text) for d in doc_ids})
            elif doc in unchanged:
                verdicts.unchanged.extend(doc_ids)
            elif doc in gone:
                verdicts.gone.extend(doc_ids)
            else:
                verdicts.unverified.extend(doc_ids)
        verdicts.rejects.extend(
            {"file": url, "line": None, "reason": reason, "field": None}
            for url, reason in [*asked.rejected, *asked.unverified]
        )
    return verdicts


def act(
    corpus: Corpus, settings: Settings, target: IndexStore, result: ReverifyResult, today: date
) -> None:
    verdicts, when = result.verdicts, today.isoformat()
    if verdicts.changed or verdicts.gone:
        result.ingests.extend(_ingest(corpus, settings))
        missed = _still_stale(target, verdicts.changed)
        if missed:
            # Rewritten within the same mtime: the mtime fast path skipped them, so force
            # just their files.
            result.notes.append(f"{len(missed)} changed documents kept their mtime; forced")
            result.ingests.extend(_ingest(corpus, settings, only_files=missed))
    fresh = verdicts.unchanged + list(verdicts.changed)
    if fresh:
        target.mark_verified(fresh, when)


def _ingest(
    corpus: Corpus, settings: Settings, only_files: set[str] | None = None
) -> list[IngestSummary]:
    select_files = None
    if only_files is not None:

        def select_files(source: SourceFile) -> bool:
            return str(source.path.resolve()) in only_files

    # One ingest per folder the corpus reads (a docc corpus: one per site), each reported.
    return [
        run_ingest(
            paths,
            settings,
            replace(target, force=True) if only_files is not None else target,
            select=select_files,
        )
        for paths, target in corpus.ingests(settings.sources_dir)
    ]


def _still_stale(target: IndexStore, changed: dict[str, str]) -> set[str]:
    after = target.document_states()
    return {
        after[d].source_path or ""
        for d, fresh_hash in changed.items()
        if d in after and after[d].content_hash != fresh_hash
    }


@flow(name="reverify", log_prints=True)
def reverify_flow(corpus: str | None = None) -> dict[str, Any]:
    """Re-check documents older than their corpus's freshness window against the source.

    Args:
        corpus: Name of a corpus in the corpora file; empty re-verifies every corpus.
    """
    settings = Settings.from_env()
    corpora = select(load_corpora(settings.corpora_file), corpus, settings.corpora_file)
    results: dict[str, Any] = {}
    failed: list[str] = []
    for each in corpora:
        try:
            results[each.name] = reverify_corpus(each, settings, date.today())
        except Exception as exc:  # one broken corpus must not starve the others
            get_run_logger().error("reverify of corpus %s failed: %s", each.name, exc)
            failed.append(each.name)
    if failed:
        raise RuntimeError(f"reverify failed for corpus {', '.join(failed)} (see the artifacts)")
    return results


def reverify_corpus(corpus: Corpus, settings: Settings, today: date) -> dict[str, Any]:
    """One corpus's re-verification, under its index's write slot, with its artifact."""
    report = RunReport(
        f"Re-verification of corpus `{corpus.name}` in index `{corpus.index}` "
        f"(fresh for {corpus.freshness_days} days)"
    )
    with reported(report, f"reverify-{corpus.name}", f"Re-verification of {corpus.name}"):
        with index_slot(corpus.index) as slot:
            report.slot = slot
            outcome = run_reverify(corpus, settings, today)
        report.counts.update(outcome.counts())
        report.add_rejects(outcome.verdicts.rejects)
        report.notes.extend(outcome.notes)
        for number, summary in enumerate(outcome.ingests, start=1):
            report.add_ingest(summary, prefix=f"ingest {number}: ")
    result = report.result()
    result["verdicts"] = {
        "unchanged": sorted(outcome.verdicts.unchanged),
        "changed": sorted(outcome.verdicts.changed),
        "gone": sorted(outcome.verdicts.gone),
        "unreadable": sorted(outcome.verdicts.unreadable),
        "unverified": sorted(outcome.verdicts.unverified),
    }
    return result
