"""A WWDC session as one Published talk: which files are sessions, parts of one or not WWDC,
where its title and facts come from, and the real 2018, 2019 and 2023 sessions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chunkers.sources.published.model import FormatError, NotADocument, Published
from chunkers.sources.published.wwdc import SIDECAR, read_session, session_from_path
from tests.support.paths import FIXTURES, SHARED_DATA

WWDC = FIXTURES / "wwdc"
KEYNOTE = WWDC / "asciiwwdc" / "en" / "2019" / "101.vtt"
SWIFTUI = WWDC / "asciiwwdc" / "en" / "2019" / "204.vtt"
UNLISTED = WWDC / "asciiwwdc" / "en" / "2019" / "999.vtt"
PLAYLIST = WWDC / "hls" / "wwdc2018" / "401" / "subtitles" / "eng" / "prog_index.m3u8"
TRANSCRIPT = WWDC / "json" / "wwdc2023" / "10187" / "transcript.json"
REAL = SHARED_DATA / "apple-docs" / "wwdc"


def read(path: Path, kind: str) -> Published:
    published = read_session(path, path.read_text(encoding="utf-8"), kind)
    assert isinstance(published, Published)
    return published


def test_a_webvtt_session_is_what_was_said_one_cue_per_line():
    assert read(SWIFTUI, "webvtt").text.splitlines() == [
        "Hi, everyone.",
        "I'm Jacob and I'll show you",
        "SwiftUI & Xcode 11 today.",
        "We'll add a plus (+) button and call onAppear(perform:).",
    ]


def test_each_line_has_the_start_second_of_its_cue():
    assert read(SWIFTUI, "webvtt").line_times == [15.576, 17.146, 18.806, 20.956]


def test_a_session_is_plain_text_from_wwdc_in_its_format():
    published = read(SWIFTUI, "webvtt")
    assert (published.language, published.source, published.format) == ("text", "wwdc", "webvtt")


def test_numbered_repeated_cues_and_speaker_labels_are_read_once_without_labels():
    assert read(KEYNOTE, "webvtt").text.splitlines() == [
        "Don't stay up too late.",
        "Wow.",
        "Thank you.",
    ]


def test_the_title_and_description_come_from_the_sessions_json_sidecar():
    published = read(SWIFTUI, "webvtt")
    assert published.title == "Introducing SwiftUI: Building Your First App"
    assert published.metadata["description"] == "See SwiftUI in action!"


def test_the_description_is_not_part_of_the_text():
    assert "See SwiftUI in action!" not in read(SWIFTUI, "webvtt").text


def test_the_url_is_apples_canonical_page_and_the_sidecars_url_is_kept_beside_it():
    published = read(SWIFTUI, "webvtt")
    assert published.url == "https://developer.apple.com/videos/play/wwdc2019/204/"
    assert published.metadata["session_url"] == "https://developer.apple.com/wwdc19/204"


def test_year_session_and_event_are_metadata():
    metadata = read(SWIFTUI, "webvtt").metadata
    assert (metadata["year"], metadata["session"], metadata["event"]) == (2019, "204", "wwdc2019")


def test_no_version_or_framework_is_invented_from_the_year():
    assert read(SWIFTUI, "webvtt").fields == {}


def test_a_session_the_sidecar_does_not_list_is_titled_by_its_year_and_number():
    published = read(UNLISTED, "webvtt")
    assert published.title == "WWDC 2019 session 999"
    assert published.url == "https://developer.apple.com/videos/play/wwdc2019/999/"


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("en/2019/204.vtt", (2019, "204")),
        ("raw-subs/wwdc2018/401/subtitles/eng/prog_index.m3u8", (2018, "401")),
        ("sessions/wwdc2023/10187/transcript.json", (2023, "10187")),
        ("talks/intro.vtt", (None, None)),
    ],
)
def test_year_and_session_are_read_from_the_path(path: str, expected: tuple):
    assert session_from_path(Path(path)) == expected


def test_a_vtt_with_no_year_or_session_is_still_a_talk_without_a_title(tmp_path: Path):
    talk = tmp_path / "talks" / "intro.vtt"
    talk.parent.mkdir()
    talk.write_text("WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nHello.\n")
    published = read(talk, "webvtt")
    assert (published.title, published.url, published.text) == (None, None, "Hello.")


def test_an_hls_session_takes_title_platforms_and_topics_from_the_wwdc_year_list():
    published = read(PLAYLIST, "hls")
    assert published.title == "What's New in Swift"
    assert published.metadata["platforms"] == ["iOS", "macOS", "tvOS", "watchOS"]
    assert published.metadata["topics"] == ["Developer Tools"]


def test_a_timed_json_transcript_is_a_session_without_its_music_cues():
    published = read(TRANSCRIPT, "json")
    assert published.format == "wwdc_json"
    assert published.text.splitlines()[0].startswith("Ben: Hi, I'm Ben")
    assert published.line_times == [10.0, 15.0, 19.0]


def test_a_json_transcript_takes_its_facts_from_the_metadata_beside_it():
    published = read(TRANSCRIPT, "json")
    assert published.title == "Meet SwiftData"
    assert published.url == "https://developer.apple.com/videos/play/wwdc2023/10187/"
    assert published.metadata["keywords"] == ["swiftdata", "@model"]


@pytest.mark.parametrize(
    "sidecar",
    [
        WWDC / "asciiwwdc" / "sessions.json",
        WWDC / "hls" / "wwdc2018" / "wwdc2018.json",
        TRANSCRIPT.parent / "metadata.json",
    ],
)
def test_a_sidecar_is_not_a_document(sidecar: Path):
    assert read_session(sidecar, sidecar.read_text(), "json") == NotADocument(SIDECAR)


def test_an_ordinary_json_file_is_not_a_wwdc_form(tmp_path: Path):
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"name": "app", "segments": ["a", "b"]}))
    assert read_session(config, config.read_text(), "json") is None


def test_a_transcript_segment_without_a_numeric_start_is_a_format_error(tmp_path: Path):
    broken = tmp_path / "transcript.json"
    broken.write_text(json.dumps({"segments": [{"start": 0, "text": "a"}, {"start": "x"}]}))
    with pytest.raises(FormatError) as raised:
        read_session(broken, broken.read_text(), "json")
    assert raised.value.field == "segments[1].start"


def test_a_vtt_file_that_is_not_webvtt_is_a_format_error(tmp_path: Path):
    subtitles = tmp_path / "2019" / "204.vtt"
    subtitles.parent.mkdir()
    subtitles.write_text("1\n00:00:01,000 --> 00:00:02,000\nSRT.\n")
    with pytest.raises(FormatError):
        read_session(subtitles, subtitles.read_text(), "webvtt")


FORBIDDEN = ("-->", "A:middle", "&amp;", "[ Applause ]", ">>")


def assert_a_titled_session(published: object) -> None:
    assert isinstance(published, Published)
    lines = published.text.split("\n")
    assert published.title and not published.title.startswith("WWDC ")  # the sidecar's
    assert published.url and published.url.startswith("https://developer.apple.com/videos/")
    assert published.line_times is not None and len(published.line_times) == len(lines)
    assert not [line for line in lines if any(mark in line for mark in FORBIDDEN)]


@pytest.mark.skipif(not REAL.is_dir(), reason="no ../shared/data/apple-docs/wwdc")
def test_the_real_wwdc_sessions_are_titled_talks_without_caption_markup():
    talks = sorted((REAL / "asciiwwdc-transcripts" / "en" / "2019").glob("*.vtt"))
    playlists = sorted(REAL.glob("tmnmn-subs-wwdc-hls-webvtt/raw-subs/*/*/subtitles/eng/*.m3u8"))
    transcripts = sorted(REAL.glob("guitaripod-wwdc-sessions/sessions/*/*/transcript.json"))
    assert (len(talks), len(playlists), len(transcripts)) == (149, 3, 1)
    for path, kind in [
        *((p, "webvtt") for p in talks),
        *((p, "hls") for p in playlists),
        *((p, "json") for p in transcripts),
    ]:
        assert_a_titled_session(read_session(path, path.read_text(encoding="utf-8"), kind))
