"""Objective-C's availability macros and framework imports tag chunks as Swift's do."""

from __future__ import annotations

import pytest

from chunkers.pipeline import chunk_document
from chunkers.tagging.objc_availability import availability_macros, macro_availability
from chunkers.tagging.tags import piece_tags
from tests.support.code_documents import polyglot_document


@pytest.mark.parametrize(
    ("macro", "platforms"),
    [
        ("API_AVAILABLE(ios(13.0), macos(10.15))", {"ios": {"min": "13.0"}, "macos": {"min": "10.15"}}),
        ('API_DEPRECATED("Use (the) other, please", ios(9.0, 16.0))', {"ios": {"min": "9.0", "deprecated_in": "16.0"}}),
        ("NS_AVAILABLE_IOS(8_0)", {"ios": {"min": "8.0"}}),
        ("NS_DEPRECATED_IOS(2_0, 9_0)", {"ios": {"min": "2.0", "deprecated_in": "9.0"}}),
        ("NS_AVAILABLE(10_10, 8_0)", {"macos": {"min": "10.10"}, "ios": {"min": "8.0"}}),
        ("__IOS_AVAILABLE(13.0)", {"ios": {"min": "13.0"}}),
        ("API_UNAVAILABLE(tvos)", {"tvos": {"unavailable": "true"}}),
    ],
)  # fmt: skip
def test_each_availability_macro_reads_as_the_same_bounds_as_available(macro, platforms):
    assert macro_availability([macro]).platforms == platforms


def test_macros_are_found_in_a_declarations_header_as_written():
    header = '- (void)signIn:(NSString *)user\n    API_DEPRECATED("Use Sign in with Apple", ios(9.0, 16.0));'
    assert availability_macros(header) == [
        'API_DEPRECATED("Use Sign in with Apple", ios(9.0, 16.0))'
    ]


def test_a_deprecating_macro_marks_the_piece_deprecated_in_that_release():
    tags = piece_tags(
        "- (void)signIn;",
        language="objc",
        imports=[],
        attributes=['API_DEPRECATED("gone", ios(9.0, 16.0))'],
    )
    assert tags.deprecated and tags.deprecated_in == "16.0"
    assert tags.platforms["ios"]["min"] == "9.0"


def test_a_headers_framework_imports_and_availability_tag_its_chunks(cfg):
    doc = polyglot_document("ios/AuthSession.h", "objc")
    chunks = chunk_document(doc, cfg).chunks
    session = next(c for c in chunks if c.symbol == "AuthSession")
    assert session.ios_version_min == "13.0" and session.chunk_type == "user_code"
    assert {tuple(c.framework_tags) for c in chunks} == {("AuthenticationServices", "Foundation")}


def test_imports_of_other_ecosystems_never_tag_apple_frameworks():
    tags = piece_tags("x", language="kotlin", imports=["Foundation"], attributes=[])
    assert tags.frameworks == []
