"""Apple's Markdown export: the metadata comment's facts, the page without its copyright
line, and unresolved links as readable names."""

from __future__ import annotations

import pytest

from chunkers.sources.published.apple_markdown import (
    availability_field,
    is_apple_markdown,
    read_apple_markdown,
)
from chunkers.sources.published.model import FormatError, Published
from tests.support.paths import FIXTURES

MD = FIXTURES / "published" / "apple-md"


def read(name: str) -> Published:
    return read_apple_markdown((MD / name).read_text(encoding="utf-8"))


def test_a_page_opening_with_the_metadata_comment_is_apples_export():
    assert is_apple_markdown((MD / "stop.md").read_text(encoding="utf-8"))


def test_a_plain_html_comment_is_not_the_metadata_comment():
    assert not is_apple_markdown("<!-- draft -->\n# Notes\n")


def test_the_title_framework_and_url_come_from_the_metadata():
    page = read("stop.md")
    assert page.title == "stop(id:)"
    assert page.fields["frameworks"] == ["AlarmKit"]
    assert page.url == "https://developer.apple.com/documentation/alarmkit/alarmmanager/stop(id:)"


def test_role_and_symbol_kind_are_metadata():
    assert read("stop.md").metadata["symbol_kind"] == "Instance Method"


def test_an_open_range_is_available_from_its_version():
    assert availability_field(["iOS: 17.0.0 -"]) == {"ios": {"min": "17.0.0"}}


def test_a_closed_range_is_deprecated_at_its_end():
    assert availability_field(["macOS: 10.2.0 - 10.10.0"]) == {
        "macos": {"min": "10.2.0", "deprecated_in": "10.10.0"}
    }


def test_a_dash_alone_is_unavailable():
    assert availability_field(["iPadOS: -"]) == {"ipados": {"unavailable": "true"}}


def test_an_empty_list_states_nothing():
    assert availability_field([]) == {}


def test_a_platform_that_is_no_os_is_left_out():
    assert "Xcode" not in str(read("stop.md").fields["platforms"])


def test_a_page_deprecated_somewhere_is_deprecated():
    assert read("stop.md").fields["deprecated"] is True


def test_the_copyright_line_is_dropped():
    assert "Copyright" not in read("stop.md").text


def test_unresolved_doc_links_keep_their_last_path_part():
    text = read("stop.md").text
    assert "`AlarmPresentation`" in text and "see scheduling-an-alarm." in text
    assert "doc://" not in text


def test_the_comment_keeps_its_lines_so_line_numbers_are_the_files():
    source = (MD / "stop.md").read_text(encoding="utf-8").splitlines()
    text = read("stop.md").text.splitlines()
    assert text.index("# stop(id:)") == source.index("# stop(id:)")


def test_a_metadata_comment_that_is_not_json_is_a_format_error():
    with pytest.raises(FormatError, match="metadata comment is not JSON"):
        read("broken.md")
