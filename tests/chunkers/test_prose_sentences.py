"""The sentence splitter behind long-section splits and transcripts."""

from __future__ import annotations

import pytest

from chunkers.prose.sentences import split_sentences


def sentences(text: str) -> list[str]:
    return [text[a:b] for a, b in split_sentences(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Is it fast? Yes! It is.", ["Is it fast?", "Yes!", "It is."]),
        ("Use a list, e.g. Array. Then sort it.", ["Use a list, e.g. Array.", "Then sort it."]),
        ("That is, i.e. The default. Next.", ["That is, i.e. The default.", "Next."]),
        (
            "Requires iOS 17.0+ or later. It ships soon.",
            ["Requires iOS 17.0+ or later.", "It ships soon."],
        ),
        ("Swift 5.10 fixed it. Version 6 follows.", ["Swift 5.10 fixed it.", "Version 6 follows."]),
        ("Wait... There is more. Done.", ["Wait... There is more.", "Done."]),
        ("Call `a.b. Then c` now. Done.", ["Call `a.b. Then c` now.", "Done."]),
        ('He said "Stop." Then he left.', ['He said "Stop."', "Then he left."]),
        ("J. R. Smith wrote it. Another one.", ["J. R. Smith wrote it.", "Another one."]),
        ("The value is 3. and more", ["The value is 3. and more"]),
        ("See [docs](https://x.io/A. B) now. Ok.", ["See [docs](https://x.io/A. B) now.", "Ok."]),
        ("Steps:\n- open the file\n- save it", ["Steps:", "- open the file", "- save it"]),
    ],
)
def test_sentence_boundaries(text, expected):
    assert sentences(text) == expected


def test_spans_cover_every_non_space_character_once():
    text = "  First one.  Second one?\n\nThird, e.g. more...  Fourth!  "
    spans = split_sentences(text)
    covered = "".join(text[a:b] for a, b in spans)
    assert covered.replace(" ", "").replace("\n", "") == "".join(text.split())
    assert all(a < b <= c for (a, b), (c, _) in zip(spans, spans[1:], strict=False))


def test_empty_text_has_no_sentences():
    assert split_sentences("  \n ") == []
