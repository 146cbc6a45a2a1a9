"""Sentence boundaries in prose, as character spans into the original text.

A regex heuristic, not a parser: it must be fast on megabytes of docs and transcripts and
it only has to be good enough to cut chunks where a reader would pause. It does not split
after abbreviations ("e.g.", "i.e.", "vs."), initials, ellipses, inside decimals ("17.0",
"iOS 17.0+"), inside inline code or link targets, or before a lowercase word.
"""

from __future__ import annotations

import re

from chunkers.config import ChunkConfig

Span = tuple[int, int]  # [start, end) character offsets

# A stop, optional closing quotes/brackets/emphasis, then whitespace. Whether it is a sentence
# end is decided by the text before and after (see `_is_boundary`).
_STOP = re.compile(r"""([.!?]+)["'”’)\]*_]*(\s+)(?=(\S))""")
# New lines that start a list item or table row begin a new unit even without punctuation:
# list items rarely end with a period, and a table is read row by row.
_LINE_START = re.compile(r"\n(?=[ \t]*(?:[-*+][ \t]|\d{1,3}[.)][ \t]|\|))")
# Text whose periods are not sentence ends. Replaced by same-length filler before scanning,
# so the offsets found still index the original text.
_MASKED = re.compile(r"``[^\n]{1,300}?``|`[^`\n]{1,300}`|\]\([^)\s]{1,500}\)|https?://\S+")
_ABBREVIATIONS = frozenset(
    [
        "e.g",
        "i.e",
        "eg",
        "ie",
        "vs",
        "cf",
        "al",
        "approx",
        "ca",
        "fig",
        "figs",
        "no",
        "nos",
        "vol",
        "pp",
        "ch",
        "sec",
        "mr",
        "mrs",
        "ms",
        "dr",
        "prof",
        "st",
        "jr",
        "sr",
    ]
)
_INITIALISM = re.compile(r"(?:[A-Za-z]\.)+[A-Za-z]$")  # "U.S", "a.k.a"
_OPENERS = frozenset("\"'“‘([`@*_#<")


def split_sentences(text: str) -> list[Span]:
    """Spans of the sentences of `text`, in order, stripped of surrounding whitespace.

    Every non-whitespace character of `text` lies in exactly one span."""
    masked = _MASKED.sub(lambda m: "x" * len(m.group()), text)
    cuts = [m.end(2) for m in _STOP.finditer(masked) if _is_boundary(masked, m)]
    cuts += [m.end() for m in _LINE_START.finditer(masked)]
    cuts.sort()
    spans: list[Span] = []
    start = 0
    for cut in [*cuts, len(text)]:
        span = _strip(text, start, cut)
        if span:
            spans.append(span)
        start = cut
    return spans


def _is_boundary(text: str, m: re.Match[str]) -> bool:
    stop, following = m.group(1), m.group(3)
    if not (following.isupper() or following.isdigit() or following in _OPENERS):
        return False  # "e.g. the", "1.5 vs. 2", sentence-internal periods of all kinds
    if stop != ".":
        return not stop.startswith("..")  # ellipsis: a pause, not an end
    word = _word_before(text, m.start(1))
    if word.lower() in _ABBREVIATIONS or _INITIALISM.match(word):
        return False
    return not (len(word) == 1 and word.isupper())  # an initial: "J. Smith"


def _word_before(text: str, end: int) -> str:
    start = end
    while start > 0 and not text[start - 1].isspace() and text[start - 1] not in "([\"'“":
        start -= 1
    return text[start:end]


def _strip(text: str, start: int, end: int) -> Span | None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, end) if start < end else None


def cut_at_words(text: str, span: Span, cfg: ChunkConfig, limit: int) -> list[Span]:
    """Cut `text[span]` into consecutive spans of at most `limit` tokens, preferring cuts
    before a token that follows whitespace so words stay whole. Run-on text (transcripts
    without punctuation, giant table cells) goes through here."""
    start, end = span
    offsets = cfg.counter.offsets(text[start:end])
    if len(offsets) <= limit:
        return [span]
    parts: list[Span] = []
    first = 0  # index of the first token of the current part
    while len(offsets) - first > limit:
        cut = first + limit
        # Walk back to a token that starts a word; a word longer than the limit is cut anyway.
        while cut > first + 1 and not _starts_word(text, start + offsets[cut][0]):
            cut -= 1
        if cut == first + 1 and not _starts_word(text, start + offsets[cut][0]):
            cut = first + limit
        part = _strip(text, start + offsets[first][0], start + offsets[cut][0])
        if part:
            parts.append(part)
        first = cut
    last = _strip(text, start + offsets[first][0], end)
    if last:
        parts.append(last)
    return parts


def _starts_word(text: str, pos: int) -> bool:
    return pos > 0 and text[pos - 1].isspace()
