"""Members deprecated inside a Swift class with `@available`: what the class's chunks say of
them, by the same rules as Objective-C's macros (test_objc_deprecated_members.py)."""

from __future__ import annotations

from chunkers.config import ChunkConfig
from chunkers.model import Chunk
from chunkers.pipeline import chunk_document
from tests.support import paths
from tests.support.code_documents import fixture_document

# In tests/fixtures/swift/deprecated_members.swift: `login` is `@available(*, deprecated)`,
# `renewToken` `@available(iOS, introduced: 13.0, deprecated: 16.0)`; `signOut()` is
# deprecated but its overload `signOut(everywhere:)` is not.
EVERYWHERE = "login"
ON_IOS_16 = "renewToken"


def _class_chunks(cfg: ChunkConfig) -> list[Chunk]:
    doc = fixture_document(paths.FIXTURES / "swift", "deprecated_members.swift", "swift")
    return [c for c in chunk_document(doc, cfg).chunks if c.kind == "class"]


def _holding(parts: list[Chunk], member: str) -> list[Chunk]:
    return [p for p in parts if p.metadata.get("members") == [member]]


def test_a_class_in_one_chunk_stays_live_and_lists_its_deprecated_methods(cfg):
    [session] = _class_chunks(cfg)
    assert not session.deprecated and session.deprecated_in is None
    assert session.metadata["deprecated_members"] == [EVERYWHERE, ON_IOS_16]


def test_a_name_that_a_live_overload_shares_is_not_listed(cfg):
    [session] = _class_chunks(cfg)
    assert "signOut" not in session.metadata["deprecated_members"]


def test_a_part_holding_only_a_member_deprecated_on_ios_is_deprecated_in_that_version(
    small_cfg,
):
    [part] = _holding(_class_chunks(small_cfg), ON_IOS_16)
    assert part.deprecated and part.deprecated_in == "16.0"
    assert part.metadata["deprecated_members"] == [ON_IOS_16]


def test_every_window_of_a_member_deprecated_everywhere_is_deprecated(small_cfg):
    windows = _holding(_class_chunks(small_cfg), EVERYWHERE)
    assert len(windows) > 1
    assert all(w.deprecated and w.deprecated_in is None for w in windows)


def test_the_parts_holding_live_members_stay_live(small_cfg):
    parts = _class_chunks(small_cfg)
    live = [p for p in parts if not {EVERYWHERE, ON_IOS_16} & set(p.metadata["members"])]
    assert len(live) == len(parts) - len(_holding(parts, EVERYWHERE)) - 1
    assert not any(p.deprecated for p in live)
    assert not any("deprecated_members" in p.metadata for p in live)
