"""Document tags from fields, merging with piece tags, Swift versions, chunk types, bad input."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunkers.tagging.availability import swift_evolution_version
from chunkers.tagging.tags import Tags, chunk_type_for, document_tags, merge_tags, piece_tags
from core.versions import version_int
from tests.support import paths
from tests.support.paths import SHARED_DATA

FIXTURES = paths.FIXTURES / "tagging"
# The shared data sits beside the checkout: ../shared/data.
SHARED_DATA = SHARED_DATA
PROPOSALS = SHARED_DATA / "swift-docs" / "swift-evolution" / "proposals"


def from_fields(fields: dict, text: str = "") -> Tags:
    return document_tags(fields, text, language="markdown", source="blog")


def declared(*attributes: str) -> Tags:
    return piece_tags("", language="swift", imports=[], attributes=list(attributes))


def bounds(**given: str | None) -> dict[str, str | None]:
    return {"min": None, "max": None, "deprecated_in": None, "obsoleted": None, **given}


# --- document fields ------------------------------------------------------------------------


def test_ios_version_field_is_a_minimum():
    assert from_fields({"ios_version": "17.0"}).platforms == {"ios": bounds(min="17.0")}


def test_explicit_min_and_max_fields_are_used_as_given():
    tags = from_fields({"ios_version_min": "15.0", "ios_version_max": "17.0"})
    assert tags.platforms["ios"] == bounds(min="15.0", max="17.0")


def test_explicit_min_beats_ios_version():
    assert (
        from_fields({"ios_version": "16.0", "ios_version_min": "15.0"}).platforms["ios"]["min"]
        == "15.0"
    )


def test_other_platform_fields_tag_their_platforms():
    tags = from_fields({"macos_version_min": "14", "visionos_version_max": "2.0"})
    assert tags.platforms == {"macos": bounds(min="14.0"), "visionos": bounds(max="2.0")}


def test_fields_override_the_documents_text():
    assert from_fields({"ios_version_min": "16.0"}, "iOS 17.0+").platforms["ios"]["min"] == "16.0"


def test_deprecated_fields_mark_the_document():
    tags = from_fields({"deprecated": True, "deprecated_in": "16"})
    assert (tags.deprecated, tags.deprecated_in) == (True, "16.0")


def test_an_explicit_deprecated_false_beats_the_text():
    assert not from_fields({"deprecated": False}, "Deprecated in iOS 16.0").deprecated


# --- merging --------------------------------------------------------------------------------


def test_the_declaration_overrides_the_document_bound_by_bound():
    document = from_fields({"ios_version_min": "16.0", "ios_version_max": "18.0"})
    piece = declared("@available(iOS 17.0, *)")
    assert merge_tags(document, piece).platforms["ios"] == bounds(min="17.0", max="18.0")


def test_merging_keeps_platforms_named_by_either_side():
    document = from_fields({"macos_version_min": "14.0"})
    piece = declared("@available(iOS 17, *)")
    assert list(merge_tags(document, piece).platforms) == ["ios", "macos"]


def test_merged_tags_are_deprecated_if_either_side_is():
    document = from_fields({"deprecated_in": "15.0"})
    assert merge_tags(document, Tags()).deprecated
    assert merge_tags(Tags(), declared("@available(*, deprecated)")).deprecated


def test_the_ios_deprecation_is_preferred_over_other_platforms():
    piece = declared("@available(macOS, deprecated: 13.0)", "@available(iOS, deprecated: 16.0)")
    assert merge_tags(Tags(), piece).deprecated_in == "16.0"


def test_without_ios_the_first_platforms_deprecation_is_used():
    piece = declared("@available(macOS, deprecated: 13.0)")
    assert merge_tags(Tags(), piece).deprecated_in == "13.0"


def test_the_pieces_swift_version_overrides_the_documents():
    document = from_fields({"swift_version": "5.9"})
    piece = declared("@available(swift 6.0)")
    assert merge_tags(document, piece).swift_version == "6.0"


def test_merged_frameworks_are_the_sorted_union():
    merged = merge_tags(
        Tags(frameworks=["SwiftUI", "Combine"]), Tags(frameworks=["Combine", "MapKit"])
    )
    assert merged.frameworks == ["Combine", "MapKit", "SwiftUI"]


# --- versions -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "stored"), [("17", "17.0"), ("17.0.0", "17.0"), (17, "17.0"), ("17.2.1", "17.2.1")]
)
def test_versions_are_stored_normalised(given, stored):
    assert from_fields({"ios_version_min": given}).platforms["ios"]["min"] == stored


def test_ios_versions_order_numerically():
    old, new = from_fields({"ios_version": "9.0"}), from_fields({"ios_version": "17.0"})
    assert version_int(old.platforms["ios"]["min"]) < version_int(new.platforms["ios"]["min"])


def test_swift_5_10_is_stored_as_written_and_orders_after_5_9():
    older = from_fields({}, "* Status: **Implemented (Swift 5.9)**").swift_version
    newer = from_fields({}, "* Status: **Implemented (Swift 5.10)**").swift_version
    assert (older, newer) == ("5.9", "5.10")
    assert version_int(older) < version_int(newer)


# --- Swift language version ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "version"),
    [
        ("* Status: **Implemented (Swift 5.9)**", "5.9"),
        ("Status: Implemented (Swift 5.10)", "5.10"),
        ("* Status:  **Implemented (Swift 6.0)**", "6.0"),
        ("- Status: **Implemented (Swift 6.3)**", "6.3"),
        ("* Status: **Implemented (6.2)**", "6.2"),
        ("* Status: **Implemented with Modifications (Swift 5.1)**", "5.1"),
        ("* Status: **Implemented (Swift 5.0)** (with modifications, see Notes)", "5.0"),
        ("* Status: **Partially implemented (Swift 5.2):** Implemented the manifest API", "5.2"),
        ("* Status: **Implemented (Swift 3.0)**\r", "3.0"),
    ],
)
def test_implemented_status_lines_give_the_swift_version(line, version):
    assert swift_evolution_version(f"# Title\n\n{line}\n") == version


@pytest.mark.parametrize(
    "line",
    [
        "* Status: **Implemented (Swift Next)**",
        "* Status: **Implemented**",
        "* Status: **Accepted**",
        "* Status: **Partially implemented (Swift 5.3 supports platform conditionals, but not)**",
        "* Status: **Active review (August 2–16, 2026)**",
    ],
)
def test_status_lines_without_an_implemented_release_give_none(line):
    assert swift_evolution_version(f"# Title\n\n{line}\n") is None


def test_a_proposal_document_is_tagged_with_its_swift_version():
    text = (FIXTURES / "proposal.md").read_text()
    tags = document_tags({}, text, language="markdown", source="swift_evolution")
    assert tags.swift_version == "5.10"
    assert tags.frameworks == ["Observation"]  # the framework, not "to Combine values"


def test_the_swift_version_field_beats_the_status_line():
    assert (
        from_fields({"swift_version": "6.0"}, "Status: Implemented (Swift 5.9)").swift_version
        == "6.0"
    )


@pytest.mark.skipif(not PROPOSALS.is_dir(), reason="shared Swift Evolution data not present")
def test_470_of_575_swift_evolution_proposals_carry_an_implemented_version():
    files = sorted(PROPOSALS.rglob("*.md"))
    versions = [swift_evolution_version(p.read_text(encoding="utf-8")) for p in files]
    assert len(files) == 575
    assert sum(v is not None for v in versions) == 470


# --- chunk types ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("language", "source", "kind", "chunk_type"),
    [
        ("swift", "user_codebase", "function", "user_code"),
        ("python", "user_codebase", None, "user_code"),
        ("swift", "apple_docs", "struct", "code_declaration"),
        ("python", "github", "class", "code_declaration"),
        ("markdown", "apple_docs", "section", "api_doc"),
        ("text", "wwdc", "topic", "transcript"),
        ("text", "podcast", "topic", "transcript"),
        ("chat", "chat", "messages", "chat"),
        ("markdown", "swift_evolution", "section", "concept"),
        ("markdown", "user_codebase", "section", "concept"),
    ],
)
def test_chunk_type_follows_language_source_and_kind(language, source, kind, chunk_type):
    assert chunk_type_for(language, source, kind) == chunk_type


# --- bad input ------------------------------------------------------------------------------


def test_malformed_field_values_are_ignored():
    fields = {
        "ios_version": "seventeen",
        "ios_version_max": [17],
        "macos_version_min": True,
        "swift_version": "5.x",
        "deprecated": "maybe",
        "deprecated_in": "soon",
        "frameworks": [None, 3, "SwiftUI"],
    }
    tags = from_fields(fields)
    assert tags == Tags(frameworks=["SwiftUI"])


def test_malformed_availability_is_ignored():
    content = (
        "@available(iOS abc, *)\n@available(macOS, introduced: x.y)\n@available(\n"
        "iOS 17.0.0.1+ and iOS 1234.567+\n"
    )
    assert piece_tags(content, language="swift", imports=[None], attributes=[None]).platforms == {}


def test_missing_inputs_give_empty_tags():
    assert document_tags(None, None, language="text", source="x") == Tags()  # type: ignore[arg-type]


@settings(max_examples=150, deadline=None)
@given(
    st.text(alphabet=st.sampled_from(list('@available(iOS macOS 17.0+-–,*:"){}\n/ Deprecated in')))
)
def test_no_text_makes_tagging_raise(text):
    document = document_tags({}, text, language="markdown", source="blog")
    piece = piece_tags(text, language="swift", imports=[text], attributes=[text])
    merge_tags(document, piece)
