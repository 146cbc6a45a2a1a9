"""A DocC render JSON page read as one document: its text as a reader sees the page, and the
title, URL, availability, framework and links the page states."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chunkers.sources.published.docc_render import (
    is_docc_page,
    read_docc_page,
    read_docc_text,
)
from chunkers.sources.published.model import FormatError, Published
from tests.support.paths import FIXTURES

PUBLISHED = FIXTURES / "published"
PAGES = PUBLISHED / "Demo.doccarchive" / "data" / "documentation"
WIDGET = PAGES / "demo" / "widget.json"
SPIN = PAGES / "demo" / "widget" / "spin(times:).json"
GETBYTES = PUBLISHED / "apple" / "getbytes.json"


def read(path: Path, base_url: str | None = None) -> Published:
    return read_docc_text(path.read_text(encoding="utf-8"), base_url=base_url)


def test_the_title_is_the_pages_metadata_title():
    assert read(SPIN).title == "spin(times:)"


def test_the_breadcrumb_is_the_symbols_path():
    assert read(SPIN).metadata["breadcrumb"] == "Demo › Widget › spin(times:)"


def test_apples_technologies_root_is_left_out_of_the_breadcrumb():
    assert read(GETBYTES).metadata["breadcrumb"] == "Foundation › NSData › getBytes(_:)"


def test_an_apple_page_opens_on_developer_apple_com():
    assert read(GETBYTES).url == (
        "https://developer.apple.com/documentation/foundation/nsdata/getbytes(_:)"
    )


def test_a_package_page_keeps_its_archive_relative_path():
    assert read(WIDGET).url == "/documentation/demo/widget"


def test_a_package_page_opens_under_the_base_url_the_user_gives():
    assert read(WIDGET, "https://example.org/demo/").url == (
        "https://example.org/demo/documentation/demo/widget"
    )


def test_apples_pages_are_apple_docs_and_a_packages_are_package_docs():
    assert (read(GETBYTES).source, read(WIDGET).source) == ("apple_docs", "package_docs")


def test_the_declaration_is_source_in_a_fence_of_its_language():
    assert "```swift\nstruct Widget : Sendable\n```" in read(WIDGET).text


def test_parameters_are_listed_by_name():
    assert "- `times`: How many full turns to make." in read(SPIN).text


def test_content_blocks_read_as_markdown():
    text = read(WIDGET).text
    assert "## Overview" in text
    assert "```swift\nvar w = Widget()\nw.spin(times: 3)\n```" in text
    assert "> Warning: Never spin a widget on the main thread." in text
    assert "- Fast spins" in text
    assert "| fast | 10 |" in text
    assert "- **angle**: Where the widget points." in text


def test_an_inline_reference_reads_as_its_title():
    assert "See Getting Started with Widgets." in read(WIDGET).text


def test_an_empty_code_listing_is_dropped():
    assert "```swift\n```" not in read(WIDGET).text


def test_topic_sections_are_short_lists_of_titles():
    assert "## Topics\n\n### Spinning\n\n- spin(times:)" in read(WIDGET).text


def test_an_unresolvable_reference_keeps_its_name():
    assert "### Conforms To\n\n- Swift.Sendable" in read(WIDGET).text


def test_no_json_syntax_reaches_the_text():
    for path in [*PAGES.rglob("*.json"), GETBYTES]:
        text = read(path).text
        assert '"type"' not in text and "inlineContent" not in text and "doc://" not in text


def test_the_deprecation_summary_opens_the_text():
    assert (
        "> Deprecated: This method is unsafe. Use `getBytes(_:length:)` instead."
        in read(GETBYTES).text
    )


def test_deprecated_at_is_trusted_over_deprecated_false():
    platforms = read(GETBYTES).fields["platforms"]
    assert platforms["ios"] == {"min": "2.0", "deprecated_in": "8.0"}
    assert platforms["macos"] == {"min": "10.0", "deprecated_in": "10.10"}


def test_a_page_deprecated_on_a_platform_is_deprecated():
    assert read(GETBYTES).fields["deprecated"] is True


def test_an_unavailable_platform_is_recorded_as_unavailable():
    assert read(GETBYTES).fields["platforms"]["ipados"] == {"unavailable": "true"}


def test_a_beta_platform_is_kept_as_metadata():
    assert read(GETBYTES).metadata["beta"] == ["visionOS"]


def test_the_framework_is_the_pages_module():
    assert read(WIDGET).fields["frameworks"] == ["Demo"]


def test_symbol_kind_and_role_are_metadata():
    meta = read(SPIN).metadata
    assert (meta["symbol_kind"], meta["role_heading"]) == ("method", "Instance Method")


def test_every_topic_reference_is_a_link_by_its_targets_url():
    links = {(link.target, link.relation) for link in read(WIDGET).links}
    assert links == {
        ("/documentation/demo", "parent"),
        ("/documentation/demo/widget/spin(times:)", "topic"),
        ("/documentation/demo/gettingstarted", "mention"),
    }


def test_a_symbol_page_links_to_the_type_it_belongs_to():
    parents = [link.title for link in read(SPIN).links if link.relation == "parent"]
    assert parents == ["Demo", "Widget"]


def test_a_truncated_page_is_a_format_error_naming_the_line():
    with pytest.raises(FormatError, match="not valid JSON") as caught:
        read(PUBLISHED / "apple" / "truncated.json")
    assert caught.value.line is not None


def test_json_without_a_doc_identifier_is_not_a_page():
    assert not is_docc_page({"metadata": {}, "identifier": {"url": "https://x"}})


def test_a_parsed_page_reads_the_same_as_its_text():
    page = json.loads(WIDGET.read_text(encoding="utf-8"))
    assert read_docc_page(page).text == read(WIDGET).text
