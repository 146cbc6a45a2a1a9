"""Reading corpus files found by `discovery`: JSONL records and plain files of code and prose.

Reading never stops on bad input: every record that cannot be used becomes a `Reject`
naming the file, line, field and reason, and the good records around it still flow. What
is not read on purpose is counted in `skipped` instead: a file (a JSONL record) whose text
holds a credential (chunkers/sources/secrets.py), and a confined file whose real path has
left its roots since it was found (chunkers/sources/paths.py).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from chunkers.model import Document, Reject, sha256_hex
from chunkers.sources.discovery import SourceFile
from chunkers.sources.file_types import HEADER_SUFFIX, header_language
from chunkers.sources.paths import OUTSIDE, OutsideRoots, open_confined
from chunkers.sources.published.dispatch import read_published
from chunkers.sources.published.model import FormatError, NotADocument, Published
from chunkers.sources.records import describe, domain_for, record_document
from chunkers.sources.secrets import secret_content, skipped_label

BINARY_SNIFF_BYTES = 8192


@dataclass
class Defaults:
    """Values for records that do not carry their own (from CLI flags or corpus config)."""

    source: str | None = None
    domain: str | None = None
    max_document_bytes: int = 5_000_000
    # Where a package's DocC archive is served (its pages' URLs); None: archive-relative.
    docc_base_url: str | None = None


@dataclass
class ReadResult:
    documents: list[Document] = field(default_factory=list)
    rejects: list[Reject] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)  # by reason, as discovery counts


@dataclass(frozen=True)
class Skipped:
    """A file or record not read on purpose, and the reason it counts under."""

    label: str


def _collect(result: ReadResult, item: Document | Reject | Skipped) -> None:
    if isinstance(item, Document):
        result.documents.append(item)
    elif isinstance(item, Skipped):
        result.skipped[item.label] += 1
    else:
        result.rejects.append(item)


def read_source(source: SourceFile, defaults: Defaults) -> ReadResult:
    if source.kind == "jsonl":
        return read_jsonl(source, defaults)
    result = ReadResult()
    item = read_plain_file(source, defaults)
    _collect(result, item)
    return result


def read_all(sources: Iterable[SourceFile], defaults: Defaults) -> ReadResult:
    """Read every source; a document id seen twice keeps its first occurrence."""
    total = ReadResult()
    seen: dict[str, str] = {}
    for source in sources:
        part = read_source(source, defaults)
        total.rejects.extend(part.rejects)
        total.skipped.update(part.skipped)
        for doc in part.documents:
            if doc.doc_id in seen:
                file, _, line = doc.origin.rpartition(":")
                total.rejects.append(
                    Reject(
                        file or doc.origin,
                        int(line) if line.isdigit() else None,
                        f"duplicate id {doc.doc_id!r}, first seen at {seen[doc.doc_id]}",
                        "id",
                    )
                )
                continue
            seen[doc.doc_id] = doc.origin
            total.documents.append(doc)
    return total


def read_jsonl(source: SourceFile, defaults: Defaults) -> ReadResult:
    result = ReadResult()
    name = str(source.path)
    try:
        with open_confined(source.path, source.within) as file:
            mtime = os.fstat(file.fileno()).st_mtime
            raw = file.read()
    except OutsideRoots:
        result.skipped[OUTSIDE] += 1
        return result
    except OSError as exc:
        result.rejects.append(Reject(name, None, f"cannot read file: {exc.strerror or exc}"))
        return result
    # The whole file first (one pass, the usual answer is no); then a record at a time, so
    # that one record's key does not cost the corpus around it.
    screened = source.screened and secret_content(raw.decode("utf-8", "replace")) is not None
    for number, line in enumerate(raw.split(b"\n"), start=1):
        if not line.strip():
            continue
        found = secret_content(line.decode("utf-8", "replace")) if screened else None
        if found:
            result.skipped[skipped_label(source.path, is_dir=False, found=found)] += 1
            continue
        item = parse_record(line, name, number, defaults, mtime)
        if isinstance(item, Document):
            item.source_file = str(source.path.resolve())
        _collect(result, item)
    return result


def parse_record(
    line: bytes, file: str, number: int, defaults: Defaults, mtime: float | None
) -> Document | Reject:
    """One JSONL line to a Document, or a Reject saying exactly what is wrong with it: the
    line as bytes here (size, UTF-8, JSON), its fields in `records`."""

    def reject(reason: str) -> Reject:
        return Reject(file, number, reason)

    if len(line) > defaults.max_document_bytes:
        return reject(
            f"record of {len(line)} bytes exceeds the limit of {defaults.max_document_bytes}"
        )
    try:
        decoded = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return reject(f"invalid UTF-8 at byte {exc.start}")
    try:
        record = json.loads(decoded)
    except json.JSONDecodeError as exc:
        return reject(f"malformed JSON: {exc.msg} at column {exc.colno}")
    except RecursionError:  # thousands of nested arrays: the decoder's stack, not ours
        return reject("malformed JSON: nested too deeply")
    if not isinstance(record, dict):
        return reject(f"expected a JSON object, got {describe(record)}")
    return record_document(
        record,
        file=file,
        line=number,
        mtime=mtime,
        default_source=defaults.source,
        default_domain=defaults.domain,
    )


def read_plain_file(source: SourceFile, defaults: Defaults) -> Document | Reject | Skipped:
    """A code or prose file as one document."""
    name = str(source.path)
    try:
        with open_confined(source.path, source.within) as file:
            stat = os.fstat(file.fileno())
            if stat.st_size > defaults.max_document_bytes:
                return Reject(
                    name,
                    None,
                    f"file of {stat.st_size} bytes exceeds the limit of "
                    f"{defaults.max_document_bytes}",
                )
            raw = file.read()
    except OutsideRoots:
        return Skipped(OUTSIDE)
    except OSError as exc:
        return Reject(name, None, f"cannot read file: {exc.strerror or exc}")
    if b"\x00" in raw[:BINARY_SNIFF_BYTES]:
        return Reject(name, None, "binary file (contains NUL bytes)")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        return Reject(name, line, f"invalid UTF-8 at byte {exc.start}")
    if not text.strip():
        return Reject(name, None, "empty file")
    found = secret_content(text, source.kind) if source.screened else None
    if found:
        return Skipped(skipped_label(source.path, is_dir=False, found=found))
    relative = _relative(source.path, source.root)
    try:
        published = read_published(
            source.path, source.root, text, source.kind, base_url=defaults.docc_base_url
        )
    except FormatError as exc:
        return Reject(name, exc.line, exc.reason, exc.field)
    if isinstance(published, NotADocument):
        return Skipped(published.label)
    if published is not None:
        return _published_document(published, source, defaults, text, stat.st_mtime)
    source_name = defaults.source or "user_codebase"
    language = source.kind
    if source.path.suffix.lower() == HEADER_SUFFIX:
        language = header_language(text)
    return Document(
        doc_id=plain_doc_id(source, defaults),
        text=text.lstrip("\ufeff"),
        source=source_name,
        domain=defaults.domain or domain_for(language),
        language=language,
        content_hash=sha256_hex(text),
        origin=name,
        path=relative,
        title=source.path.name,
        mtime=stat.st_mtime,
        source_file=str(source.path.resolve()),
    )


def _published_document(
    published: Published, source: SourceFile, defaults: Defaults, text: str, mtime: float
) -> Document:
    """A file of a published format as one document: the reader says what it is (source,
    title, URL, the facts the page states); the file stays its origin and path."""
    relative = _relative(source.path, source.root)
    return Document(
        doc_id=f"{published.source}:{relative}",
        text=published.text,
        source=published.source,
        domain=defaults.domain or "ios",
        language=published.language,
        content_hash=sha256_hex(text),
        origin=str(source.path),
        path=relative,
        title=published.title or source.path.name,
        url=published.url,
        mtime=mtime,
        source_file=str(source.path.resolve()),
        fields=dict(published.fields),
        metadata={"format": published.format, **published.metadata},
        links=list(published.links),
        line_times=published.line_times,
    )


# The sources a published format's reader names (chunkers.sources.published): a file's id
# starts with one of them, or with the run's own source, whichever read it.
PUBLISHED_SOURCES = frozenset({"apple_docs", "package_docs", "wwdc"})


def plain_doc_id(source: SourceFile, defaults: Defaults) -> str:
    """The id a code or prose file gets when no published format's reader claims it."""
    return f"{defaults.source or 'user_codebase'}:{_relative(source.path, source.root)}"


def is_plain_doc_id(doc_id: str, source: SourceFile, defaults: Defaults) -> bool:
    """Whether `doc_id` is the id reading `source` gives, known before the file is read (the
    mtime fast path): the run's source or a published reader's, then the relative path."""
    prefix, _, rest = doc_id.partition(":")
    if rest != _relative(source.path, source.root):
        return False
    return prefix == (defaults.source or "user_codebase") or prefix in PUBLISHED_SOURCES


def _relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.as_posix()
