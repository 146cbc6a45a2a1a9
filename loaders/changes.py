"""What a run has to do: which files to read, which documents are new, changed, unchanged
or gone. The mtime of a file is the fast path; the content hash decides."""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from chunkers.model import Document
from chunkers.sources.discovery import SourceFile
from chunkers.sources.reading import Defaults, is_plain_doc_id
from core.store.contract import DocState


@dataclass
class ReadPlan:
    to_read: list[SourceFile]
    # Documents of files whose mtime matches what the index recorded: unchanged, not read.
    unchanged_ids: set[str] = field(default_factory=set)


@dataclass
class ChangeSet:
    new: list[Document] = field(default_factory=list)
    changed: list[Document] = field(default_factory=list)
    unchanged_ids: list[str] = field(default_factory=list)
    deleted_ids: list[str] = field(default_factory=list)

    @property
    def to_process(self) -> list[Document]:
        return self.new + self.changed


class Scope:
    """The part of the index a run is responsible for: documents that came from the files,
    directories or globs it was given. Only those can be pruned when they vanish."""

    def __init__(self, paths: Iterable[str | os.PathLike[str]]) -> None:
        self.roots: list[str] = []
        self.patterns: list[str] = []
        self.files: set[str] = set()
        for raw in paths:
            text = str(raw)
            if any(ch in text for ch in "*?["):
                self.patterns.append(os.path.abspath(text))
            elif Path(text).is_dir():
                self.roots.append(str(Path(text).resolve()) + os.sep)
            else:
                self.files.add(str(Path(text).resolve()))

    def covers(self, source_path: str | None) -> bool:
        if not source_path:
            return False
        return (
            source_path in self.files
            or any(source_path.startswith(root) for root in self.roots)
            or any(fnmatch.fnmatch(source_path, pattern) for pattern in self.patterns)
        )


def plan_reads(
    sources: list[SourceFile],
    states: dict[str, DocState],
    defaults: Defaults,
    *,
    force: bool = False,
) -> ReadPlan:
    if force:
        return ReadPlan(list(sources))
    by_file: dict[str, list[tuple[str, DocState]]] = {}
    for doc_id, state in states.items():
        if state.source_path:
            by_file.setdefault(state.source_path, []).append((doc_id, state))
    plan = ReadPlan([])
    for source in sources:
        path = str(source.path.resolve())
        try:
            mtime = source.path.stat().st_mtime
        except OSError:
            plan.to_read.append(source)  # reading reports the problem as a reject
            continue
        known = by_file.get(path, [])
        if source.kind != "jsonl":
            known = [(d, s) for d, s in known if is_plain_doc_id(d, source, defaults)]
        if known and all(state.mtime == mtime for _, state in known):
            plan.unchanged_ids.update(doc_id for doc_id, _ in known)
        else:
            plan.to_read.append(source)
    return plan


def detect_changes(
    documents: list[Document],
    states: dict[str, DocState],
    scope: Scope,
    *,
    skipped_unchanged: set[str] | frozenset[str] = frozenset(),
    files_with_rejects: set[str] | frozenset[str] = frozenset(),
    force: bool = False,
) -> ChangeSet:
    """Sort documents into new/changed/unchanged and find the ones gone from their source.

    A document is only pruned when its file was read cleanly: a record that became
    unreadable (a broken line) keeps its last good version instead of vanishing."""
    changes = ChangeSet(unchanged_ids=sorted(skipped_unchanged))
    seen = set(skipped_unchanged)
    for doc in documents:
        seen.add(doc.doc_id)
        state = states.get(doc.doc_id)
        if state is None:
            changes.new.append(doc)
        elif force or state.content_hash != doc.content_hash:
            changes.changed.append(doc)
        else:
            changes.unchanged_ids.append(doc.doc_id)
    changes.deleted_ids = sorted(
        doc_id
        for doc_id, state in states.items()
        if doc_id not in seen
        and scope.covers(state.source_path)
        and state.source_path not in files_with_rejects
    )
    return changes


def file_stamps(
    documents: list[Document],
    states: dict[str, DocState],
    *,
    incomplete_files: set[str] | frozenset[str] = frozenset(),
) -> dict[str, float]:
    """doc_id -> mtime for the documents whose file this run reads completely: every record
    of it will be in the index when the run's last batch commits. Files with a rejected
    record are left unstamped, so the next run reads them again and reports the reject again.
    Documents that already carry their file's mtime need no stamp."""
    stamps: dict[str, float] = {}
    for doc in documents:
        if doc.mtime is None or not doc.source_file or doc.source_file in incomplete_files:
            continue
        state = states.get(doc.doc_id)
        if state is None or state.mtime != doc.mtime or state.content_hash != doc.content_hash:
            stamps[doc.doc_id] = doc.mtime
    return stamps
