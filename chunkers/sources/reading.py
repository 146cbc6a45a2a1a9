"""Reading corpus files found by `discovery`: JSONL records and plain files of code and prose.

Reading never stops on bad input: every record that cannot be used becomes a `Reject`
naming the file, line, field and reason, and the good records around it still flow.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from chunkers.model import (
    DOMAINS,
    KNOWN_FIELDS,
    LANGUAGES,
    PLATFORM_VERSION_FIELDS,
    Document,
    Reject,
    sha256_hex,
)
from chunkers.sources.discovery import CODE_AND_PROSE, SourceFile
from core.versions import VersionError, normalize_version

BINARY_SNIFF_BYTES = 8192
VERSION_FIELDS = (
    "ios_version",
    "ios_version_min",
    "ios_version_max",
    "deprecated_in",
    "swift_version",
    *PLATFORM_VERSION_FIELDS,
)
STRING_FIELDS = ("source", "domain", "language", "path", "title", "url")


@dataclass
class Defaults:
    """Values for records that do not carry their own (from CLI flags or corpus config)."""

    source: str | None = None
    domain: str | None = None
    max_document_bytes: int = 5_000_000


@dataclass
class ReadResult:
    documents: list[Document] = field(default_factory=list)
    rejects: list[Reject] = field(default_factory=list)


def _collect(result: ReadResult, item: Document | Reject) -> None:
    if isinstance(item, Document):
        result.documents.append(item)
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
        raw = source.path.read_bytes()
        mtime = source.path.stat().st_mtime
    except OSError as exc:
        result.rejects.append(Reject(name, None, f"cannot read file: {exc.strerror or exc}"))
        return result
    for number, line in enumerate(raw.split(b"\n"), start=1):
        if not line.strip():
            continue
        item = parse_record(line, name, number, defaults, mtime)
        if isinstance(item, Document):
            item.source_file = str(source.path.resolve())
        _collect(result, item)
    return result


def parse_record(
    line: bytes, file: str, number: int, defaults: Defaults, mtime: float | None
) -> Document | Reject:
    """One JSONL line to a Document, or a Reject saying exactly what is wrong with it."""

    def reject(reason: str, field_name: str | None = None) -> Reject:
        return Reject(file, number, reason, field_name)

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
    if not isinstance(record, dict):
        return reject(f"expected a JSON object, got {type(record).__name__}")
    problem = validate_record(record)
    if problem:
        return reject(*problem)
    text, messages = _text_of(record)
    if not text.strip():
        field_name = "messages" if "messages" in record else "text"
        return reject("missing or empty text (needs 'text', 'content' or 'messages')", field_name)
    source = record.get("source") or defaults.source or ("chat" if messages else "docs")
    path = record.get("path")
    given_id = record.get("id")
    if given_id is not None and str(given_id).strip():
        doc_id = str(given_id)
    elif path:
        doc_id = f"{source}:{path}"
    else:
        doc_id = f"{source}:{file}#L{number}"
    language = record.get("language") or _language_for(path, messages, source)
    return Document(
        doc_id=doc_id,
        text=text,
        source=source,
        domain=record.get("domain") or defaults.domain or _domain_for(language),
        language=language,
        # Over the whole record, so that a changed field (a version, a framework) re-ingests
        # the document even when its text did not change.
        content_hash=sha256_hex(json.dumps(record, sort_keys=True, ensure_ascii=False)),
        origin=f"{file}:{number}",
        path=path,
        title=record.get("title"),
        url=record.get("url"),
        mtime=mtime,
        fields={k: v for k, v in record.items() if k in KNOWN_FIELDS and k not in _BODY},
        metadata={k: v for k, v in record.items() if k not in KNOWN_FIELDS},
        messages=messages,
    )


_BODY = {"text", "content", "messages"}


def validate_record(record: dict[str, Any]) -> tuple[str, str] | None:
    """(reason, field) for the first problem of a record, or None."""
    for key in ("text", "content"):
        if key in record and record[key] is not None and not isinstance(record[key], str):
            return f"{key!r} must be a string, got {type(record[key]).__name__}", key
    if "id" in record and not isinstance(record["id"], (str, int)):
        return f"'id' must be a string or integer, got {type(record['id']).__name__}", "id"
    for key in STRING_FIELDS:
        value = record.get(key)
        if value is not None and not isinstance(value, str):
            return f"{key!r} must be a string, got {type(value).__name__}", key
    if record.get("language") is not None and record["language"] not in LANGUAGES:
        return f"unknown language {record['language']!r} (one of {sorted(LANGUAGES)})", "language"
    if record.get("domain") is not None and record["domain"] not in DOMAINS:
        return f"unknown domain {record['domain']!r} (one of {sorted(DOMAINS)})", "domain"
    frameworks = record.get("frameworks")
    if frameworks is not None and (
        not isinstance(frameworks, list) or not all(isinstance(f, str) for f in frameworks)
    ):
        return "'frameworks' must be a list of strings", "frameworks"
    deprecated = record.get("deprecated")
    if deprecated is not None and not isinstance(deprecated, bool):
        return f"'deprecated' must be true or false, got {deprecated!r}", "deprecated"
    for key in VERSION_FIELDS:
        value = record.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            return f'{key!r} must be a version string such as "17.0"', key
        try:
            normalize_version(str(value))
        except VersionError as exc:
            return str(exc), key
    verified = record.get("last_verified")
    if verified is not None:
        try:
            date.fromisoformat(str(verified)[:10])
        except ValueError:
            return f"'last_verified' must be an ISO date (YYYY-MM-DD), got {verified!r}", (
                "last_verified"
            )
    messages = record.get("messages")
    if messages is not None and (
        not isinstance(messages, list)
        or not all(
            isinstance(m, dict)
            and isinstance(m.get("content", ""), str)
            and isinstance(m.get("role", ""), str)
            for m in messages
        )
    ):
        return "'messages' must be a list of {role, content} objects with string values", (
            "messages"
        )
    return None


def read_plain_file(source: SourceFile, defaults: Defaults) -> Document | Reject:
    """A code or prose file as one document."""
    name = str(source.path)
    try:
        stat = source.path.stat()
        if stat.st_size > defaults.max_document_bytes:
            return Reject(
                name,
                None,
                f"file of {stat.st_size} bytes exceeds the limit of {defaults.max_document_bytes}",
            )
        raw = source.path.read_bytes()
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
    relative = _relative(source.path, source.root)
    source_name = defaults.source or "user_codebase"
    language = source.kind
    return Document(
        doc_id=plain_doc_id(source, defaults),
        text=text.lstrip("\ufeff"),
        source=source_name,
        domain=defaults.domain or _domain_for(language),
        language=language,
        content_hash=sha256_hex(text),
        origin=name,
        path=relative,
        title=source.path.name,
        mtime=stat.st_mtime,
        source_file=str(source.path.resolve()),
    )


def plain_doc_id(source: SourceFile, defaults: Defaults) -> str:
    """The id a code or prose file gets, known before the file is read (mtime fast path)."""
    return f"{defaults.source or 'user_codebase'}:{_relative(source.path, source.root)}"


def _text_of(record: dict[str, Any]) -> tuple[str, list[dict[str, str]] | None]:
    text = record.get("text")
    if text is None:
        text = record.get("content")
    messages = record.get("messages")
    if messages is not None:
        rendered = "\n".join(
            f"{m.get('role') or 'unknown'}: {m.get('content', '')}"
            for m in messages
            if str(m.get("content", "")).strip()
        )
        return (text if text and text.strip() else rendered), messages
    return text or "", None


def _language_for(path: str | None, messages: Any, source: str) -> str:
    if messages is not None:
        return "chat"
    if path:
        language = CODE_AND_PROSE.get(Path(path).suffix.lower())
        if language:
            return language
    if source == "wwdc":
        return "text"
    return "markdown"


def _domain_for(language: str) -> str:
    return {"swift": "ios", "python": "python"}.get(language, "general")


def _relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.as_posix()
