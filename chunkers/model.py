"""The records that flow through ingestion: documents in, pieces from a chunker, chunks out."""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, get_args

# Version fields of the other Apple platforms, as records may give them.
PLATFORM_VERSION_FIELDS = tuple(
    f"{platform}_version_{end}"
    for platform in ("macos", "ipados", "watchos", "tvos", "visionos")
    for end in ("min", "max")
)
# Fields of an input record that the pipeline understands; anything else is kept as metadata.
KNOWN_FIELDS = frozenset(
    {
        "id",
        "text",
        "content",
        "source",
        "domain",
        "language",
        "path",
        "title",
        "url",
        "ios_version",
        "ios_version_min",
        "ios_version_max",
        "swift_version",
        "frameworks",
        "deprecated",
        "deprecated_in",
        "last_verified",
        "messages",
        "platforms",
        *PLATFORM_VERSION_FIELDS,
    }
)

# Source code, chunked by declaration (chunkers.code), and configuration and build files,
# chunked as line windows (chunkers.code.config).
DECLARATION_LANGUAGES = frozenset(
    {
        "swift", "python", "objc", "c", "cpp", "metal", "typescript", "tsx", "javascript",
        "jsx", "kotlin", "java", "go", "rust", "ruby", "bash",
    }
)  # fmt: skip
CONFIG_LANGUAGES = frozenset(
    {"yaml", "toml", "json", "xcconfig", "plist", "podfile", "cartfile", "gemfile"}
)
CODE_LANGUAGES = DECLARATION_LANGUAGES | CONFIG_LANGUAGES
# Code whose imports name packages of its own ecosystem, never Apple frameworks.
NON_APPLE_LANGUAGES = frozenset(
    {"python", "typescript", "tsx", "javascript", "jsx", "kotlin", "java", "go", "rust", "ruby"}
    | {"bash"}
)
LANGUAGES = frozenset({"markdown", "text", "chat"}) | CODE_LANGUAGES
Domain = Literal["ios", "web", "python", "trading", "vc", "general"]
DOMAINS: frozenset[str] = frozenset(get_args(Domain))
CHUNK_TYPES = frozenset(
    {"api_doc", "code_declaration", "user_code", "concept", "transcript", "chat"}
)


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass
class Document:
    """One validated input document."""

    doc_id: str
    text: str
    source: str
    domain: str
    language: str
    content_hash: str
    origin: str  # "file:line" or a file path, for messages and rejects
    path: str | None = None
    title: str | None = None
    url: str | None = None
    mtime: float | None = None
    source_file: str | None = None  # absolute path of the file the document came from
    fields: dict[str, Any] = field(default_factory=dict)  # known optional fields as given
    metadata: dict[str, Any] = field(default_factory=dict)  # unknown fields, never dropped
    messages: list[dict[str, str]] | None = None
    # What a published page links to (chunkers.sources.published.model.PageLink), and for a
    # talk the second each line of `text` starts at.
    links: list[Any] = field(default_factory=list)
    line_times: list[float] | None = None


@dataclass
class Piece:
    """What a chunker cuts out of a document, before tagging and ids."""

    content: str
    context: str = ""
    start_line: int | None = None
    end_line: int | None = None
    symbol: str | None = None
    kind: str | None = None  # declaration kind, "section", "window", "messages", ...
    attributes: list[str] = field(default_factory=list)
    imports: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    # What the piece's code declares and uses (chunkers.code.references.Reference).
    references: list[Any] = field(default_factory=list)


@dataclass
class Chunk:
    """A retrievable unit with its tags. Field names are the index's column names."""

    chunk_id: str
    doc_id: str
    chunk_index: int
    content: str
    context: str
    chunk_type: str
    language: str
    source: str
    domain: str
    token_count: int
    content_hash: str
    path: str | None = None
    title: str | None = None
    url: str | None = None
    symbol: str | None = None
    kind: str | None = None
    start_line: int | None = None
    end_line: int | None = None
    ios_version_min: str | None = None
    ios_version_max: str | None = None
    ios_version_min_int: int | None = None
    ios_version_max_int: int | None = None
    swift_version: str | None = None
    swift_version_int: int | None = None
    deprecated: bool = False
    deprecated_in: str | None = None
    deprecated_in_int: int | None = None
    platforms: dict[str, dict[str, str | None]] = field(default_factory=dict)
    framework_tags: list[str] = field(default_factory=list)
    imports: list[str] = field(default_factory=list)
    attributes: list[str] = field(default_factory=list)
    last_verified: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    # Not a chunk column: the index keeps them in its own table (core.store.contract
    # REFERENCE_SCHEMA), keyed by chunk id.
    references: list[Any] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Reject:
    """A record or file that could not be used, with where and why."""

    file: str
    line: int | None
    reason: str
    field: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        what = f" field {self.field!r}:" if self.field else ""
        return f"{where}:{what} {self.reason}"
