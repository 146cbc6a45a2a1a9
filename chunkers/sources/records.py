"""The JSONL record of docs/ingestion.md's "Documents in", declared once as a pydantic model.

A decoded record that meets it becomes a `Document`; one that does not becomes a `Reject`
naming its file, line and field. Types are strict because JSON already carries exact types
and every coercion loses what the author wrote: "17.10" read as a number is 17.1, and
`true` accepted as an integer id becomes the id "True".
"""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
)
from pydantic_core import PydanticCustomError

from chunkers.model import DOMAINS, LANGUAGES, Document, Reject, sha256_hex
from chunkers.sources.file_types import file_kind
from core.versions import normalize_version

MISSING_TEXT = "missing or empty text (needs 'text', 'content' or 'messages')"
ISO_DATE = "an ISO date (YYYY-MM-DD)"
BODY = frozenset({"text", "content", "messages"})


def _known_language(value: str | None) -> str | None:
    if value is not None and value not in LANGUAGES:
        raise ValueError(f"unknown language {value!r} (one of {sorted(LANGUAGES)})")
    return value


def _known_domain(value: str | None) -> str | None:
    if value is not None and value not in DOMAINS:
        raise ValueError(f"unknown domain {value!r} (one of {sorted(DOMAINS)})")
    return value


def _version(value: str | int | float | None) -> str | int | float | None:
    # Checked but kept as written: the chunks store versions both as written and as integers.
    if value is not None:
        normalize_version(str(value))  # its VersionError is a ValueError: pydantic reports it
    return value


def _iso_date(value: str | None) -> str | None:
    if value is not None:
        try:
            # A timestamp such as 2024-05-01T10:00:00Z counts by its date.
            date.fromisoformat(value[:10])
        except ValueError:
            raise ValueError(f"must be {ISO_DATE}, got {describe(value)}") from None
    return value


Text = Annotated[str | None, Field(description="a string")]
KnownDomain = Annotated[str | None, AfterValidator(_known_domain), Field(description="a string")]
KnownLanguage = Annotated[
    str | None, AfterValidator(_known_language), Field(description="a string")
]
Version = Annotated[
    str | int | float | None,
    AfterValidator(_version),
    Field(description='a version string such as "17.0"'),
]


class Message(BaseModel):
    """One turn of a chat session. Other keys (timestamps, ids) are allowed and kept."""

    model_config = ConfigDict(strict=True, extra="allow")

    role: str = ""
    content: str = ""


class JsonlRecord(BaseModel):
    """One line of a JSONL corpus. Every field may be absent or null; a record needs text,
    from `text`, `content` or `messages`. Unknown fields are allowed: they become metadata."""

    model_config = ConfigDict(strict=True, extra="allow")

    text: Text = None
    content: Text = None
    id: Annotated[str | int | None, Field(description="a string or an integer")] = None
    source: Text = None
    domain: KnownDomain = None
    language: KnownLanguage = None
    path: Text = None
    title: Text = None
    url: Text = None
    frameworks: Annotated[list[str] | None, Field(description="a list of strings")] = None
    deprecated: Annotated[bool | None, Field(description="true or false")] = None
    ios_version: Version = None
    ios_version_min: Version = None
    ios_version_max: Version = None
    deprecated_in: Version = None
    swift_version: Version = None
    macos_version_min: Version = None
    macos_version_max: Version = None
    ipados_version_min: Version = None
    ipados_version_max: Version = None
    watchos_version_min: Version = None
    watchos_version_max: Version = None
    tvos_version_min: Version = None
    tvos_version_max: Version = None
    visionos_version_min: Version = None
    visionos_version_max: Version = None
    # Availability per platform, as a published page states it (chunkers.sources.published):
    # {"ios": {"min": "17.0", "deprecated_in": "18.0"}, "ipados": {"unavailable": "true"}}.
    platforms: Annotated[
        dict[str, dict[str, str]] | None,
        Field(description="an object of platform → {min, max, deprecated_in, unavailable}"),
    ] = None
    last_verified: Annotated[str | None, AfterValidator(_iso_date), Field(description=ISO_DATE)] = (
        None
    )
    messages: Annotated[
        list[Message] | None,
        Field(description="a list of {role, content} objects with string values"),
    ] = None

    @property
    def body(self) -> str:
        """The document's text: `text`, else `content`, else the messages as `role: content`
        lines (a chat record's own `text` wins over its rendering)."""
        text = self.text if self.text is not None else self.content
        if self.messages is None:
            return text or ""
        if text and text.strip():
            return text
        return "\n".join(
            f"{m.role or 'unknown'}: {m.content}" for m in self.messages if m.content.strip()
        )

    @model_validator(mode="after")
    def _has_text(self) -> JsonlRecord:
        if not self.body.strip():
            blamed = "messages" if "messages" in self.model_fields_set else "text"
            raise PydanticCustomError("missing_text", MISSING_TEXT, {"field": blamed})
        return self


def record_document(
    record: dict[str, Any],
    *,
    file: str,
    line: int,
    mtime: float | None,
    default_source: str | None,
    default_domain: str | None,
) -> Document | Reject:
    """A decoded JSONL record as a Document, or a Reject naming its file, line and field."""
    try:
        valid = JsonlRecord.model_validate(record)
    except ValidationError as exc:
        reason, field_name = first_problem(exc, record)
        return Reject(file, line, reason, field_name)
    source = valid.source or default_source or ("chat" if valid.messages else "docs")
    if valid.id is not None and str(valid.id).strip():
        doc_id = str(valid.id)
    elif valid.path:
        doc_id = f"{source}:{valid.path}"
    else:
        doc_id = f"{source}:{file}#L{line}"
    language = valid.language or _language_for(valid, source)
    return Document(
        doc_id=doc_id,
        text=valid.body,
        source=source,
        domain=valid.domain or default_domain or domain_for(language),
        language=language,
        # Over the whole record as written, so that a changed field (a version, a framework)
        # re-ingests the document even when its text did not change.
        content_hash=sha256_hex(json.dumps(record, sort_keys=True, ensure_ascii=False)),
        origin=f"{file}:{line}",
        path=valid.path,
        title=valid.title,
        url=valid.url,
        mtime=mtime,
        fields={k: v for k, v in record.items() if k in JsonlRecord.model_fields and k not in BODY},
        metadata=dict(valid.model_extra or {}),
        # As written: a message's other keys go on to the chat chunker untouched.
        messages=record.get("messages"),
    )


def first_problem(exc: ValidationError, record: dict[str, Any]) -> tuple[str, str | None]:
    """(reason, field) for the first error of a record; the reason leaves the field's name to
    the Reject, which prints it."""
    error = exc.errors(include_url=False)[0]
    ctx = error.get("ctx", {})
    if not error["loc"]:  # a rule over the whole record: only the one about text
        return error["msg"], ctx.get("field")
    name = str(error["loc"][0])
    if error["type"] == "value_error":  # a validator of ours, which words its own reason
        return str(ctx["error"]), name
    expected = JsonlRecord.model_fields[name].description
    value, where = _located(record, error["loc"])
    if where == name:
        return f"must be {expected}, got {describe(value)}", name
    return f"must be {expected}; {where} is {describe(value)}", name


def describe(value: Any) -> str:
    """A JSON value as a record's author would name it: `number 5`, `string 'yes'`, `null`."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return f"number {value}"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:40] + "…"
        return f"string {shown!r}"
    return "a list" if isinstance(value, list) else "an object"


def domain_for(language: str) -> str:
    return {"swift": "ios", "objc": "ios", "metal": "ios", "python": "python"}.get(
        language, "general"
    )


def _language_for(record: JsonlRecord, source: str) -> str:
    if record.messages is not None:
        return "chat"
    if record.path:
        language = file_kind(Path(record.path))
        if language and language != "jsonl":
            return language
    if source == "wwdc":
        return "text"
    return "markdown"


def _located(record: dict[str, Any], loc: tuple[int | str, ...]) -> tuple[Any, str]:
    """The value an error's path points at inside the record, and that path as written
    (`frameworks[1]`, `messages[0].role`)."""
    name = str(loc[0])
    value, where = record[name], name
    for part in loc[1:]:
        if isinstance(part, int) and isinstance(value, list) and part < len(value):
            value, where = value[part], f"{where}[{part}]"
        elif where != name and isinstance(value, dict) and part in value:
            value, where = value[part], f"{where}.{part}"
        else:
            # A union's member ('str', 'int') follows the field's name in the path: it is
            # pydantic's bookkeeping, not a step into the value.
            break
    return value, where
