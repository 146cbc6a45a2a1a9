"""Front matter: YAML at the very top of a markdown file, versions kept as written."""

from __future__ import annotations

from chunkers.prose.front_matter import split_front_matter
from chunkers.prose.markdown import chunk_markdown
from tests.support.paths import FIXTURES

GUIDE = (FIXTURES / "prose" / "guide.md").read_text()


def test_front_matter_becomes_metadata():
    meta, _, _ = split_front_matter(GUIDE)
    assert meta["title"] == "Persisting Data: A SwiftData Guide"
    assert meta["frameworks"] == ["SwiftData", "SwiftUI"]
    assert meta["tags"] == ["persistence", "core data migration"]
    assert meta["deprecated"] is False


def test_nested_mapping_and_folded_text_are_parsed():
    meta, _, _ = split_front_matter(GUIDE)
    assert meta["author"] == {"name": "Jane Appleseed", "team": "Frameworks"}
    assert meta["summary"] == "How to model, store and query app data with SwiftData."


def test_version_numbers_stay_strings():
    meta, _, _ = split_front_matter(GUIDE)
    assert meta["ios_version_min"] == "17.0"
    assert meta["swift_version"] == "5.10"  # a float would read 5.1


def test_body_starts_after_the_closing_delimiter_and_offset_counts_removed_lines():
    _, body, offset = split_front_matter(GUIDE)
    assert offset == 16
    assert body == "".join(GUIDE.splitlines(keepends=True)[16:])


def test_text_without_front_matter_is_returned_unchanged():
    text = "# Title\n\nBody.\n"
    assert split_front_matter(text) == ({}, text, 0)


def test_unclosed_front_matter_is_body_text():
    text = "---\ntitle: x\n\nNo closing delimiter.\n"
    assert split_front_matter(text) == ({}, text, 0)


def test_a_leading_rule_followed_by_prose_is_not_front_matter():
    text = "---\nJust a paragraph after a rule.\n---\n"
    assert split_front_matter(text) == ({}, text, 0)


def test_quotes_flow_lists_comments_and_null():
    text = "---\n# a comment\na: 'it''s'\nb: [x, \"y, z\"]\nc: plain # note\nd:\n---\nbody\n"
    meta, body, _ = split_front_matter(text)
    assert meta == {"a": "it's", "b": ["x", "y, z"], "c": "plain", "d": None}
    assert body == "body\n"


def test_chunk_markdown_keeps_front_matter_out_of_text_and_in_every_piece(cfg):
    pieces = chunk_markdown(GUIDE, cfg)
    assert all("ios_version_min" not in p.content for p in pieces)
    assert all(p.metadata["front_matter"]["title"].startswith("Persisting") for p in pieces)


def test_dates_and_integers_stay_as_written():
    meta, _, _ = split_front_matter("---\nupdated: 2024-06-10\nbuild: 0042\n---\nbody\n")
    assert meta == {"updated": "2024-06-10", "build": "0042"}


def test_malformed_yaml_is_body_text():
    text = "---\ntitle: [unclosed\n---\nbody\n"
    assert split_front_matter(text) == ({}, text, 0)
