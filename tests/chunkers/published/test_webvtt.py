"""WebVTT → cues of what was said: timings, headers, identifiers, cleaning, broken files."""

from __future__ import annotations

import pytest

from chunkers.sources.published.model import FormatError
from chunkers.sources.published.webvtt import Cue, clean_cue_text, merge_cues, read_webvtt


def vtt(*blocks: str, header: str = "WEBVTT") -> str:
    return "\n\n".join([header, *blocks]) + "\n"


def test_a_cue_gives_its_start_end_and_text():
    assert read_webvtt(vtt("00:00:01.500 --> 00:00:03.250\nHello.")) == [Cue(1.5, 3.25, "Hello.")]


def test_timestamps_without_hours_are_minutes_and_seconds():
    [cue] = read_webvtt(vtt("01:02.000 --> 01:04.500\nHi."))
    assert (cue.start, cue.end) == (62.0, 64.5)


def test_hours_count_in_the_start_time():
    [cue] = read_webvtt(vtt("01:00:00.250 --> 01:00:01.000\nLate."))
    assert cue.start == 3600.25


def test_cue_settings_after_the_end_time_are_not_text():
    [cue] = read_webvtt(vtt("00:00:01.000 --> 00:00:02.000 A:middle line:90%\nSwift."))
    assert (cue.end, cue.text) == (2.0, "Swift.")


def test_a_cue_identifier_is_not_text():
    [cue] = read_webvtt(vtt("17\n00:00:01.000 --> 00:00:02.000\nWelcome."))
    assert cue.text == "Welcome."


def test_the_header_block_with_a_timestamp_map_is_skipped():
    text = vtt(
        "00:00:58.756 --> 00:01:00.786 A:middle\nSince 2015.",
        header="WEBVTT\nX-TIMESTAMP-MAP=MPEGTS:181083,LOCAL:00:00:00.000",
    )
    assert [c.text for c in read_webvtt(text)] == ["Since 2015."]


def test_note_and_style_blocks_are_not_cues():
    text = vtt(
        "NOTE made by hand\nover two lines",
        "STYLE\n::cue { color: red }",
        "00:00:01.000 --> 00:00:02.000\nSaid.",
    )
    assert [c.text for c in read_webvtt(text)] == ["Said."]


def test_a_multi_line_cue_is_one_line_of_text():
    [cue] = read_webvtt(vtt("00:00:01.000 --> 00:00:02.000\nIt is so great\nto be here."))
    assert cue.text == "It is so great to be here."


def test_windows_line_endings_and_a_byte_order_mark_are_read():
    text = "\ufeffWEBVTT\r\n\r\n00:00:01.000 --> 00:00:02.000\r\nHi.\r\n"
    assert [c.text for c in read_webvtt(text)] == ["Hi."]


def test_voice_class_and_timestamp_tags_are_stripped():
    raw = "<v Tim Cook>Hello <c.yellow>there</c>, <00:00:01.500>everyone</v>"
    assert clean_cue_text(raw) == "Hello there, everyone"


def test_a_less_than_sign_in_spoken_code_is_kept():
    assert clean_cue_text("if a &lt; b &amp;&amp; c &gt; d") == "if a < b && c > d"


def test_html_entities_are_decoded():
    assert clean_cue_text("Signing &amp; Capabilities, Apple&#39;s") == (
        "Signing & Capabilities, Apple's"
    )


@pytest.mark.parametrize(
    "raw",
    [
        "[ Applause ]",
        "(Applause)",
        "(Music playing)",
        "♪ ♪",
        "[ Cheering and Applause ]",
        "[laughter]",
    ],
)
def test_a_cue_that_is_only_a_sound_caption_is_empty(raw: str):
    assert clean_cue_text(raw) == ""


def test_a_sound_caption_inside_speech_is_dropped():
    assert (
        clean_cue_text("Thank you. [ Applause ] Now, (Laughter) Swift.") == "Thank you. Now, Swift."
    )


def test_a_caption_note_split_over_two_cues_is_dropped_from_both():
    assert (clean_cue_text("This is the first one [beeping"), clean_cue_text("sound].")) == (
        "This is the first one",
        "",
    )


def test_spoken_code_in_brackets_and_parentheses_is_kept():
    assert clean_cue_text("tap plus (+) and call onAppear(perform:) on items[0]") == (
        "tap plus (+) and call onAppear(perform:) on items[0]"
    )


def test_a_transcribers_guessed_word_in_brackets_is_kept():
    assert clean_cue_text("a big [state] machine") == "a big [state] machine"


def test_speaker_marks_are_dropped_and_the_words_kept():
    assert clean_cue_text("&gt;&gt; Hi, everyone.") == "Hi, everyone."


@pytest.mark.parametrize(
    "raw", [">> TIM COOK: Wow.", ">> FEMALE SPEAKER:\nWow.", "PATRICK STARR: Wow."]
)
def test_a_speaker_label_in_capitals_is_dropped(raw: str):
    [cue] = read_webvtt(vtt(f"00:00:01.000 --> 00:00:02.000\n{raw}"))
    assert cue.text == "Wow."


def test_a_capitalised_url_is_not_a_speaker_label():
    assert clean_cue_text("HTTPS://your domain name/") == "HTTPS://your domain name/"


def test_a_file_that_does_not_start_with_webvtt_is_a_format_error_at_line_1():
    with pytest.raises(FormatError) as raised:
        read_webvtt("1\n00:00:01,000 --> 00:00:02,000\nAn SRT file.\n")
    assert raised.value.line == 1


def test_a_broken_timing_line_is_a_format_error_at_its_line():
    text = vtt("00:00:01.000 --> 00:00:02.000\nFine.", "7\n00:01.000 --> garbage\nBroken.")
    with pytest.raises(FormatError) as raised:
        read_webvtt(text)
    assert raised.value.line == 7
    assert "garbage" in raised.value.reason


def test_a_cue_that_ends_before_it_starts_is_a_format_error():
    with pytest.raises(FormatError) as raised:
        read_webvtt(vtt("00:00:05.000 --> 00:00:04.000\nBackwards."))
    assert raised.value.line == 3


def test_a_cue_repeated_verbatim_in_one_file_is_merged_once():
    cue = "3\n00:02:14.400 --> 00:02:15.566\nWow."
    assert len(merge_cues(read_webvtt(vtt(cue, cue)))) == 1


def test_cues_with_the_same_text_at_different_times_are_both_kept():
    cues = [Cue(1.0, 2.0, "Thank you."), Cue(2.0, 3.0, "Thank you.")]
    assert merge_cues(cues) == cues


def test_merged_cues_are_in_time_order():
    later, earlier = [Cue(60.0, 61.0, "b")], [Cue(1.0, 2.0, "a")]
    assert [c.text for c in merge_cues(later, earlier)] == ["a", "b"]
