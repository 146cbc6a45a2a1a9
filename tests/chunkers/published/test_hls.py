"""HLS subtitle playlists: segments in order, read beside the playlist, boundary cues once."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from chunkers.sources.published import hls
from chunkers.sources.published.model import FormatError, NotADocument, Published
from chunkers.sources.published.wwdc import MASTER_PLAYLIST, SEGMENT, read_session
from tests.support.paths import FIXTURES

SESSION = FIXTURES / "wwdc" / "hls" / "wwdc2018" / "401"
PLAYLIST = SESSION / "subtitles" / "eng" / "prog_index.m3u8"


@pytest.fixture
def session(tmp_path: Path) -> Path:
    """A copy of the fixture session's subtitles to break; returns its playlist."""
    folder = tmp_path / "wwdc2018" / "401" / "subtitles" / "eng"
    shutil.copytree(PLAYLIST.parent, folder)
    return folder / PLAYLIST.name


def test_the_segment_uris_are_listed_in_order_without_tags():
    uris = [uri for _, uri in hls.segment_uris(PLAYLIST.read_text())]
    assert uris == ["fileSequence0.webvtt", "fileSequence1.webvtt", "fileSequence2.webvtt"]


def test_a_cue_repeated_across_two_segments_is_read_once():
    cues = hls.read_playlist(PLAYLIST, PLAYLIST.read_text())
    assert [c.text for c in cues].count("Since late 2015, Swift has been") == 1


def test_the_cues_of_all_segments_are_read_in_time_order():
    cues = hls.read_playlist(PLAYLIST, PLAYLIST.read_text())
    assert [c.start for c in cues] == sorted(c.start for c in cues)
    assert cues[-1].text == "Thank you."


def test_a_playlist_is_a_session_with_one_cue_per_line():
    published = read_session(PLAYLIST, PLAYLIST.read_text(), "hls")
    assert isinstance(published, Published)
    assert published.format == "hls"
    assert published.text.splitlines() == [
        "Good morning and welcome to",
        "What's New in Swift.",
        "Since late 2015, Swift has been",
        "an open source project on",
        "GitHub.",
        "Thank you.",
    ]
    assert published.line_times == [52.796, 54.666, 58.756, 60.786, 62.476, 126.476]


def test_a_segment_listed_by_a_playlist_is_not_a_document_of_its_own():
    segment = PLAYLIST.parent / "fileSequence1.webvtt"
    assert read_session(segment, segment.read_text(), "webvtt") == NotADocument(SEGMENT)


def test_the_master_playlist_is_not_a_document_of_its_own():
    master = SESSION / "hls_vod_mvp.m3u8"
    assert read_session(master, master.read_text(), "hls") == NotADocument(MASTER_PLAYLIST)


def test_a_missing_segment_is_a_format_error_naming_it(session: Path):
    (session.parent / "fileSequence1.webvtt").unlink()
    with pytest.raises(FormatError) as raised:
        read_session(session, session.read_text(), "hls")
    assert "fileSequence1.webvtt" in raised.value.reason
    assert raised.value.line == 9


def test_a_broken_segment_is_a_format_error_naming_it_and_its_line(session: Path):
    (session.parent / "fileSequence2.webvtt").write_text("WEBVTT\n\n00:02:04.546 --> ?\nHi.\n")
    with pytest.raises(FormatError) as raised:
        read_session(session, session.read_text(), "hls")
    assert "fileSequence2.webvtt" in raised.value.reason
    assert "line 3" in raised.value.reason


def test_a_segment_outside_the_playlists_folder_is_refused(session: Path):
    outside = session.parents[1] / "secret.webvtt"
    outside.write_text("WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nPrivate.\n")
    session.write_text("#EXTM3U\n#EXTINF:60.0,\n../secret.webvtt\n")
    with pytest.raises(FormatError, match="outside"):
        read_session(session, session.read_text(), "hls")


def test_a_playlist_without_the_extm3u_tag_is_a_format_error(session: Path):
    with pytest.raises(FormatError) as raised:
        read_session(session, "fileSequence0.webvtt\n", "hls")
    assert raised.value.line == 1
