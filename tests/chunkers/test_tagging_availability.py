"""Platform availability: the prose forms and every `@available` form, read into tags."""

from __future__ import annotations

import pytest

from chunkers.tagging.tags import document_tags, piece_tags
from tests.support import paths

FIXTURES = paths.FIXTURES / "tagging"


def prose(text: str):
    return document_tags({}, text, language="markdown", source="apple_docs")


def swift_piece(content: str = "", *, attributes: list[str] | None = None):
    return piece_tags(content, language="swift", imports=[], attributes=attributes or [])


def declared(*attributes: str):
    return swift_piece(attributes=list(attributes))


def page(name: str):
    return document_tags(
        {}, (FIXTURES / name).read_text(), language="markdown", source="apple_docs"
    )


# --- prose forms ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "platform", "minimum"),
    [
        ("iOS 17.0+", "ios", "17.0"),
        ("iPadOS 17.0+", "ipados", "17.0"),
        ("macOS 14.0+", "macos", "14.0"),
        ("Mac Catalyst 13.1+", "maccatalyst", "13.1"),
        ("tvOS 17+", "tvos", "17.0"),
        ("watchOS 10.0+", "watchos", "10.0"),
        ("visionOS 1.0+", "visionos", "1.0"),
    ],
)
def test_platform_version_plus_is_a_minimum(text, platform, minimum):
    assert prose(text).platforms[platform]["min"] == minimum


@pytest.mark.parametrize(
    "text", ["Available in iOS 26.0 and later.", "Available on iOS 26.0 and later."]
)
def test_available_and_later_is_a_minimum(text):
    assert prose(text).platforms["ios"]["min"] == "26.0"


def test_introduced_in_is_a_minimum():
    assert prose("Introduced in iOS 14").platforms["ios"]["min"] == "14.0"


def test_deprecated_in_records_the_deprecation_version():
    tags = prose("Deprecated in iOS 16.0")
    assert tags.platforms["ios"]["deprecated_in"] == "16.0"
    assert (tags.deprecated, tags.deprecated_in) == (True, "16.0")


def test_deprecation_in_running_prose_does_not_mark_the_text():
    # A migration guide mentions the old API; it must not be hidden as deprecated itself.
    assert not prose("NavigationView was deprecated in iOS 16.0; use NavigationStack.").deprecated


@pytest.mark.parametrize("text", ["iOS 13.0–16.0", "iOS 13.0-16.0"])
def test_a_range_gives_minimum_and_maximum(text):
    bounds = prose(text).platforms["ios"]
    assert (bounds["min"], bounds["max"], bounds["deprecated_in"]) == ("13.0", "16.0", None)


def test_a_range_marked_deprecated_is_deprecated_at_its_upper_bound():
    tags = prose("iOS 13.0-16.0 Deprecated")
    assert tags.platforms["ios"] == {
        "min": "13.0",
        "max": "16.0",
        "deprecated_in": "16.0",
        "obsoleted": None,
    }
    assert tags.deprecated


def test_a_bare_platform_version_is_not_availability():
    assert prose("This bug was fixed in iOS 17, see the iOS 17.2 release notes.").platforms == {}


def test_the_first_mention_of_a_platform_wins():
    tags = page("api_page.md")
    assert tags.platforms["ios"]["min"] == "17.0"  # not the later "iOS 18.0+"


def test_an_api_page_header_tags_every_platform():
    tags = page("api_page.md")
    minimums = {name: bounds["min"] for name, bounds in tags.platforms.items()}
    assert minimums == {
        "ios": "17.0",
        "ipados": "17.0",
        "macos": "14.0",
        "watchos": "10.0",
        "tvos": "17.0",
        "visionos": "1.0",
        "maccatalyst": "17.0",
    }


def test_a_deprecated_api_page_is_deprecated_in_its_ios_version():
    tags = page("deprecated_page.md")
    assert tags.deprecated_in == "16.0"
    assert tags.platforms["macos"]["deprecated_in"] == "13.0"
    assert tags.platforms["watchos"]["max"] == "9.0"


def test_availability_text_in_a_code_document_does_not_tag_the_whole_file():
    text = "// Requires iOS 17.0+\nfunc f() {}\n"
    tags = document_tags({}, text, language="swift", source="github")
    assert tags.platforms == {}


def test_availability_text_in_a_piece_tags_the_piece():
    tags = swift_piece("/// Available in iOS 15.0 and later.\nfunc f() {}\n")
    assert tags.platforms["ios"]["min"] == "15.0"


# --- @available -----------------------------------------------------------------------------


def test_available_with_one_platform_is_its_minimum():
    assert declared("@available(iOS 17.0, *)").platforms["ios"]["min"] == "17.0"


def test_available_with_several_platforms_sets_each_minimum():
    tags = declared("@available(iOS 17.0, macOS 14.0, *)")
    assert (tags.platforms["ios"]["min"], tags.platforms["macos"]["min"]) == ("17.0", "14.0")


def test_available_long_form_reads_introduced_and_deprecated_despite_the_message():
    tags = declared(
        '@available(iOS, introduced: 15.0, deprecated: 17.0, message: "Use f(x:), or (g)")'
    )
    bounds = tags.platforms["ios"]
    assert (bounds["min"], bounds["deprecated_in"]) == ("15.0", "17.0")
    assert (tags.deprecated, tags.deprecated_in) == (True, "17.0")


def test_obsoleted_is_recorded_and_becomes_the_maximum():
    bounds = declared("@available(iOS, obsoleted: 16.0)").platforms["ios"]
    assert (bounds["obsoleted"], bounds["max"]) == ("16.0", "16.0")


@pytest.mark.parametrize(
    "attribute", ["@available(*, deprecated)", '@available(*, deprecated, renamed: "load()")']
)
def test_unconditional_deprecation_has_no_version(attribute):
    tags = declared(attribute)
    assert (tags.deprecated, tags.deprecated_in, tags.platforms) == (True, None, {})


def test_platform_deprecation_without_a_version_is_still_deprecated():
    tags = declared('@available(iOS, deprecated, message: "Use the async variant")')
    assert (tags.deprecated, tags.deprecated_in) == (True, None)


def test_unavailable_on_a_platform_is_marked_on_that_platform():
    tags = declared("@available(iOS, unavailable)")
    assert tags.platforms["ios"]["unavailable"] == "true"
    assert not tags.deprecated


def test_unavailable_everywhere_counts_as_deprecated():
    assert declared('@available(*, unavailable, renamed: "start()")').deprecated


def test_available_swift_is_the_swift_version():
    tags = declared("@available(swift 5.9)")
    assert (tags.swift_version, tags.platforms) == ("5.9", {})


def test_several_available_attributes_on_one_declaration_combine():
    tags = declared(
        "@available(iOS 15.0, *)",
        "@available(iOS, deprecated: 17.0)",
        "@available(macOS, unavailable)",
    )
    assert tags.platforms["ios"]["min"] == "15.0"
    assert tags.platforms["ios"]["deprecated_in"] == "17.0"
    assert tags.platforms["macos"]["unavailable"] == "true"


def test_app_extension_restrictions_do_not_tag_the_platform():
    assert declared("@available(iOSApplicationExtension, unavailable)").platforms == {}


def test_attributes_are_read_from_content_when_the_piece_lists_none():
    tags = swift_piece("@available(iOS 17.0, *)\n@MainActor\nfinal class Model {}\n")
    assert tags.platforms["ios"]["min"] == "17.0"


def test_the_pieces_own_attribute_list_beats_its_content():
    content = "@available(iOS 15.0, *)\nstruct S {}"
    tags = swift_piece(content, attributes=["@available(iOS 16.0, *)"])
    assert tags.platforms["ios"]["min"] == "16.0"


def test_a_part_of_a_type_split_at_its_members_is_not_tagged_by_a_members_attributes():
    content = "    @available(*, deprecated)\n    func old() {}\n\n    func new() {}\n"
    tags = piece_tags(content, language="swift", imports=[], attributes=[], member_part=True)
    assert not tags.deprecated and tags.platforms == {}


def test_a_split_type_is_tagged_by_its_first_top_level_attribute_group():
    tags = swift_piece((FIXTURES / "split_type.swift").read_text())
    assert tags.platforms["ios"] == {
        "min": "17.0",
        "max": None,
        "deprecated_in": "18.0",
        "obsoleted": None,
    }
    assert tags.platforms["macos"]["min"] == "14.0"


def test_nested_commented_and_quoted_attributes_do_not_tag_the_piece():
    tags = swift_piece((FIXTURES / "window.swift").read_text())
    # Outer's member is nested, 99.0 is in a comment, 98.0 in a string: Later's applies.
    assert tags.platforms["ios"]["min"] == "16.0"


def test_a_type_with_only_member_attributes_has_no_availability():
    tags = swift_piece("struct S {\n    @available(iOS 18.0, *)\n    func f() {}\n}\n")
    assert tags.platforms == {}


def test_an_attribute_in_a_markdown_code_block_tags_the_piece():
    text = "Use the new API:\n\n```swift\n@available(iOS 17.0, *)\nstruct S {}\n```\n"
    tags = piece_tags(text, language="markdown", imports=[], attributes=[])
    assert tags.platforms["ios"]["min"] == "17.0"
