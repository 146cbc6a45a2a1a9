"""A method deprecated inside an Objective-C class: what the class's chunks say of it."""

from __future__ import annotations

from chunkers.config import ChunkConfig
from chunkers.model import Chunk
from chunkers.pipeline import chunk_document
from tests.support.code_documents import polyglot_document

DEPRECATED = "signInWithUser:password:"


def _interface_chunks(cfg: ChunkConfig) -> list[Chunk]:
    doc = polyglot_document("ios/AuthSession.h", "objc")
    return [c for c in chunk_document(doc, cfg).chunks if c.kind == "interface"]


def test_a_class_in_one_chunk_stays_live_and_lists_its_deprecated_method(cfg):
    [session] = _interface_chunks(cfg)
    assert not session.deprecated and session.deprecated_in is None
    assert session.metadata["deprecated_members"] == [DEPRECATED]


def test_the_part_of_a_split_class_holding_only_the_deprecated_method_is_deprecated(small_cfg):
    parts = _interface_chunks(small_cfg)
    assert len(parts) > 1
    [part] = [p for p in parts if p.metadata.get("members") == [DEPRECATED]]
    assert part.deprecated and part.deprecated_in == "16.0"
    assert part.metadata["deprecated_members"] == [DEPRECATED]


def test_the_other_parts_of_a_split_class_stay_live(small_cfg):
    others = [
        p for p in _interface_chunks(small_cfg) if DEPRECATED not in p.metadata.get("members", [])
    ]
    assert others and not any(p.deprecated for p in others)
    assert not any("deprecated_members" in p.metadata for p in others)
