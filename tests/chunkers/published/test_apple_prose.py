"""Apple's pages saved as Markdown, and Xcode's guides: recognised by what they state, read
with their title, framework and deprecation."""

from __future__ import annotations

from pathlib import Path

from chunkers.sources.published.apple_prose import (
    guide_framework,
    is_saved_apple_page,
    is_xcode_guide,
    read_saved_apple_page,
    read_xcode_guide,
)
from tests.support.paths import FIXTURES

PUBLISHED = FIXTURES / "published"
SAVED = PUBLISHED / "saved" / "observation-iterator.md"
GUIDE = PUBLISHED / "AdditionalDocumentation" / "SwiftUI-New-Toolbar-Features.md"


def text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def test_a_saved_page_is_recognised_by_its_badges_under_its_title():
    assert is_saved_apple_page(text(SAVED))


def test_a_users_notes_that_name_one_ios_version_are_not_a_saved_page():
    assert not is_saved_apple_page(text(PUBLISHED / "notes.md"))


def test_an_api_collection_without_badges_is_recognised_by_breadcrumb_and_role():
    page = "\n\n- TipKit\n- Tips\n-  Equatable Implementations \n\nAPI Collection\n\n# Equatable\n"
    assert is_saved_apple_page(page)


def test_the_title_is_the_pages_heading():
    assert read_saved_apple_page(text(SAVED)).title == "withMutation(of:keyPath:_:)"


def test_the_framework_is_the_breadcrumbs_first_entry_even_outside_the_lexicon():
    assert read_saved_apple_page(text(SAVED)).fields["frameworks"] == ["Observation"]


def test_a_lone_deprecated_badge_marks_the_page_deprecated():
    assert read_saved_apple_page(text(SAVED)).fields["deprecated"] is True


def test_empty_code_blocks_are_dropped():
    assert "``` source\n```" not in read_saved_apple_page(text(SAVED)).text


def test_entities_in_declarations_are_decoded():
    assert "func withMutation<Subject, Member, T>(" in read_saved_apple_page(text(SAVED)).text


def test_a_guide_is_recognised_by_xcodes_folder():
    assert is_xcode_guide(GUIDE, PUBLISHED)


def test_markdown_elsewhere_is_not_a_guide():
    assert not is_xcode_guide(PUBLISHED / "notes.md", PUBLISHED)


def test_a_guides_framework_is_the_one_its_file_name_starts_with():
    assert read_xcode_guide(GUIDE, text(GUIDE)).fields["frameworks"] == ["SwiftUI"]


def test_a_framework_of_two_words_is_found_in_a_file_name():
    assert guide_framework("Swift-Charts-3D-Visualization") == "Charts"


def test_a_file_name_that_starts_with_no_framework_names_none():
    assert guide_framework("Implementing-Assistive-Access-in-iOS") is None
