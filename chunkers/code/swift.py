"""Swift source -> pieces: one per top-level declaration, with the code between them kept.

The cutting is `chunkers.code.declarations` (shared by every tree-sitter language); what
tree-sitter-swift reports, and how, is in `chunkers.code.swift_syntax`. Attributes
(`@MainActor`, `@available(...)`, property wrappers) are part of the declaration node in
tree-sitter-swift, so they are always in the declaration's piece; `#if`/`#endif` stay with
the code they guard; `#Preview {}` and other macro invocations are `other` code.
"""

from __future__ import annotations

from chunkers.code.declarations import chunk_source
from chunkers.code.swift_syntax import DECLARATION_KINDS, SWIFT
from chunkers.config import ChunkConfig
from chunkers.model import Piece

__all__ = ["DECLARATION_KINDS", "chunk_swift"]


def chunk_swift(text: str, cfg: ChunkConfig) -> list[Piece]:
    """Cut Swift source into pieces of at most `cfg.max_tokens` tokens."""
    return chunk_source(text, cfg, SWIFT)
