"""WebVTT subtitles → timed cues of what was said.

WWDC transcripts reach us as WebVTT written by two hands: ASCIIwwdc's files (cue numbers,
` A:middle`, `&gt;&gt;` speaker marks, `[ Applause ]`) and Apple's own HLS segments (an
`X-TIMESTAMP-MAP` header, one-minute files). Both are read here into `Cue`s whose text is
only the words spoken, so that a chunk never carries caption markup into an index.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable
from dataclasses import dataclass

from chunkers.sources.published.model import FormatError


@dataclass(frozen=True)
class Cue:
    """One caption: when it is shown (seconds from the start of the talk) and what it says."""

    start: float
    end: float
    text: str


_SIGNATURE = re.compile(r"WEBVTT(?:[ \t].*)?$")
_TIMING = re.compile(r"^(\S+)[ \t]+-->[ \t]+(\S+)(?:[ \t]+.*)?$")
_TIMESTAMP = re.compile(r"^(?:(\d+):)?([0-5]\d):([0-5]\d)\.(\d{3})$")
# Blocks that carry no cue; the spec lets them sit between cues as well as in the header.
_NON_CUE_BLOCK = re.compile(r"^(?:NOTE|STYLE|REGION)(?:[ \t]|$)")

# Only WebVTT's own tags: a literal `<` in spoken code ("a < b") must survive.
_TAG = re.compile(r"</?(?:[bciuv]|lang|ruby|rt)(?:\.[^\s>]*)?(?:[ \t][^>]*)?>|<\d+(?::\d\d)+\.\d+>")
_MUSIC_SPAN = re.compile(r"♪[^♪]*♪|♪")
_SQUARE = re.compile(r"\[([^\[\]]*)\]")
_ROUND = re.compile(r"\(([^()]*)\)")
# What captioners put in brackets instead of speech. A bracketed word outside this list
# ("[state] machine", "[Together]") is a transcriber's guess at a real word and stays.
_ANNOTATION = re.compile(
    r"applau|aapplau|music|laugh|chuckl|cheer|inaudible|phonetic|spelling|sound|silence"
    r"|crosstalk|noise|foreign language|beep|chim|whirr|clap|singing|playing",
    re.IGNORECASE,
)
_WORDS_ONLY = re.compile(r"^[A-Za-z][A-Za-z '\-]*$")
# A caption note split over two cues ("a [beeping" / "sound]."): each half is dropped, as
# a bracket left open across cues is never spoken code.
_OPEN_NOTE = re.compile(r"\[[A-Za-z '\-]*$")
_CLOSED_NOTE = re.compile(r"^[A-Za-z '\-]*\]")
# A speaker label in capitals after `>>` ("TIM COOK:", "FEMALE SPEAKER:"), or at the start
# of a cue without `>>` only when it is at least two capitalised words ("PATRICK STARR:"), so
# that "HTTPS://" or a spoken "OK:" is not taken for a name.
_CAPS_WORD = r"[A-Z][A-Z.'\-]*"
_MARKED_SPEAKER = re.compile(rf">>\s*(?:{_CAPS_WORD}(?: {_CAPS_WORD})*:(?=\s|$))?")
_BARE_SPEAKER = re.compile(rf"^{_CAPS_WORD}(?: {_CAPS_WORD})+:(?=\s|$)")
_SPACES = re.compile(r"\s+")
# Only before punctuation that ends a phrase: " .leading" is spoken Swift and keeps its space.
_GAP_BEFORE_PUNCTUATION = re.compile(r"\s+([,.;:!?])(?=\s|$)")
_ORPHAN_PUNCTUATION = re.compile(r"^[,;:]\s*")
_SPOKEN = re.compile(r"\w")


def parse_timestamp(value: str) -> float | None:
    """Seconds of a WebVTT timestamp (`hh:mm:ss.mmm` or `mm:ss.mmm`), None if malformed."""
    match = _TIMESTAMP.match(value)
    if not match:
        return None
    hours, minutes, seconds, millis = match.groups()
    return int(hours or 0) * 3600 + int(minutes) * 60 + int(seconds) + int(millis) / 1000


def _is_annotation(inner: str, whole_cue: bool) -> bool:
    words = inner.strip()
    if not words:
        return True
    if not _WORDS_ONLY.match(words):
        return False  # "(on:)", "(+)", "[0]": spoken code, not a caption note
    return whole_cue or bool(_ANNOTATION.search(words))


def clean_cue_text(raw: str) -> str:
    """The words said in a cue: no tags, entities decoded, no sound captions, no `>>` marks
    or speaker labels, whitespace collapsed; "" when nothing spoken remains."""
    text = _SPACES.sub(" ", _TAG.sub("", raw)).strip()
    text = html.unescape(text)
    text = _MUSIC_SPAN.sub(" ", text)
    whole = text.strip()

    def square(match: re.Match[str]) -> str:
        inner = match.group(1)
        # ASCIIwwdc pads sound captions with spaces: "[ Knocking ]".
        padded = inner.startswith(" ") and inner.endswith(" ")
        drop = padded or _is_annotation(inner, match.group(0) == whole)
        return " " if drop else match.group(0)

    def round_(match: re.Match[str]) -> str:
        return " " if _is_annotation(match.group(1), match.group(0) == whole) else match.group(0)

    text = _ROUND.sub(round_, _SQUARE.sub(square, text))
    text = _CLOSED_NOTE.sub(" ", _OPEN_NOTE.sub(" ", text.strip()))
    text = _MARKED_SPEAKER.sub(" ", text)
    text = _SPACES.sub(" ", text).strip()
    text = _BARE_SPEAKER.sub("", text).strip()
    # Where a note stood before punctuation ("buyer [phonetic]."), the gap goes too.
    text = _ORPHAN_PUNCTUATION.sub("", _GAP_BEFORE_PUNCTUATION.sub(r"\1", text))
    return text if _SPOKEN.search(text) else ""


def _blocks(lines: list[str], first: int) -> Iterable[tuple[int, list[str]]]:
    """Runs of non-blank lines from index `first`, each with its 1-based line number."""
    block: list[str] = []
    start = first
    for index in range(first, len(lines)):
        if lines[index].strip():
            if not block:
                start = index
            block.append(lines[index])
        elif block:
            yield start + 1, block
            block = []
    if block:
        yield start + 1, block


def _timing(line: str, number: int) -> tuple[float, float]:
    match = _TIMING.match(line.strip())
    start = parse_timestamp(match.group(1)) if match else None
    end = parse_timestamp(match.group(2)) if match else None
    if start is None or end is None:
        raise FormatError(f"broken cue timing: {line.strip()!r}", line=number)
    if end < start:
        raise FormatError(f"cue ends before it starts: {line.strip()!r}", line=number)
    return start, end


def read_webvtt(text: str) -> list[Cue]:
    """Every cue of one WebVTT file in file order, its text cleaned (possibly "")."""
    lines = text.removeprefix("\ufeff").splitlines()
    if not lines or not _SIGNATURE.match(lines[0]):
        raise FormatError("not WebVTT: the first line is not 'WEBVTT'", line=1)
    # The header (X-TIMESTAMP-MAP and the like) runs to the first blank line, unless a
    # writer forgot that line and went straight into a cue.
    first = 1
    while first < len(lines) and lines[first].strip() and "-->" not in lines[first]:
        first += 1
    cues: list[Cue] = []
    for number, block in _blocks(lines, first):
        if _NON_CUE_BLOCK.match(block[0]):
            continue
        if "-->" in block[0]:
            timing = 0
        elif len(block) > 1 and "-->" in block[1]:
            timing = 1  # a cue identifier precedes its timing line
        else:
            continue  # text with no timing: players skip it too
        start, end = _timing(block[timing], number + timing)
        cues.append(Cue(start, end, clean_cue_text(" ".join(block[timing + 1 :]))))
    return cues


def merge_cues(*cue_lists: Iterable[Cue]) -> list[Cue]:
    """The cues of several lists (or one) in time order, each distinct cue once: a cue
    repeated verbatim (same start, end and text), in one file or across two HLS segments,
    was said once."""
    seen: set[Cue] = set()
    merged: list[Cue] = []
    for cues in cue_lists:
        for cue in cues:
            if cue not in seen:
                seen.add(cue)
                merged.append(cue)
    # A stable sort: cues that start together keep the order they were written in.
    return sorted(merged, key=lambda cue: cue.start)
