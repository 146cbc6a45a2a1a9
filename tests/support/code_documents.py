"""Documents of a user's codebase made from fixture files, as a directory ingest makes them."""

from __future__ import annotations

from pathlib import Path

from chunkers.model import Document, sha256_hex
from tests.support import paths

POLYGLOT = paths.FIXTURES / "polyglot" / "repo"


def polyglot_document(relative: str, language: str, domain: str = "ios") -> Document:
    """The fixture repository's file at `relative`, as a user_codebase document."""
    return fixture_document(POLYGLOT, relative, language, domain)


def fixture_document(root: Path, relative: str, language: str, domain: str = "ios") -> Document:
    """The fixture file at `root / relative`, as a user_codebase document."""
    path = root / relative
    text = path.read_text(encoding="utf-8")
    return Document(
        doc_id=f"user_codebase:{relative}",
        text=text,
        source="user_codebase",
        domain=domain,
        language=language,
        content_hash=sha256_hex(text),
        origin=str(path),
        path=relative,
    )
