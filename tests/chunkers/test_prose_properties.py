"""Properties of the prose chunkers on generated documents and on a real docs corpus."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chunkers.config import ChunkConfig
from chunkers.prose.markdown import chunk_markdown
from chunkers.prose.transcript import chunk_transcript

SWIFT_DOCS = Path("/work/shared/data/swift-docs")
VOCABULARY = [
    "swift",
    "view",
    "model",
    "store",
    "query",
    "actor",
    "task",
    "value",
    "state",
    "binding",
    "iOS",
    "17.0+",
    "macOS",
    "e.g.",
    "i.e.",
    "`Array`",
    "``Symbol``",
    "async",
    "await",
    "the",
    "a",
    "of",
    "and",
    "to",
    "internationalization",
    "SwiftUI",
    "x",
]
WORD = re.compile(r"[A-Za-z0-9]+")

words = st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=30)
sentence = words.map(lambda ws: " ".join(ws).capitalize() + ".")
paragraph = st.lists(sentence, min_size=1, max_size=12).map(" ".join)
heading = st.tuples(
    st.integers(1, 4), st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=4)
).map(lambda h: "#" * h[0] + " " + " ".join(h[1]))
code = st.lists(words.map(" ".join), min_size=1, max_size=60).map(
    lambda lines: "```swift\n" + "\n".join(lines) + "\n```"
)
bullets = st.lists(words.map(lambda ws: "- " + " ".join(ws)), min_size=1, max_size=6).map("\n".join)
MARKDOWN = st.lists(st.one_of(heading, paragraph, code, bullets), min_size=1, max_size=12).map(
    "\n\n".join
)


def word_counts(texts) -> Counter[str]:
    return Counter(w for text in texts for w in WORD.findall(text))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=MARKDOWN, sizes=st.sampled_from([(60, 80, 10), (30, 40, 0), (400, 512, 40)]))
def test_property_markdown_fits_the_limit_and_keeps_every_word(counter, text, sizes):
    target, limit, overlap = sizes
    cfg = ChunkConfig(counter, target_tokens=target, max_tokens=limit, overlap_tokens=overlap)
    pieces = chunk_markdown(text, cfg)
    assert all(cfg.count(p.content) <= limit for p in pieces)
    # Headings move to the context (a heading with no text under it names no piece, so only
    # body lines are checked); overlap only ever adds words.
    body = [line for line in text.splitlines() if not line.startswith("#")]
    assert word_counts(body) - word_counts(p.content for p in pieces) == Counter()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=st.lists(paragraph, min_size=1, max_size=6).map("\n".join),
    target=st.sampled_from([40, 400]),
)
def test_property_transcript_fits_the_limit_and_keeps_words_in_order(counter, text, target):
    cfg = ChunkConfig(counter, target_tokens=target, max_tokens=target + target // 4)
    pieces = chunk_transcript(text, cfg)
    assert all(cfg.count(p.content) <= cfg.max_tokens for p in pieces)
    assert [w for p in pieces for w in p.content.split()] == text.split()


@pytest.mark.slow
@pytest.mark.skipif(not SWIFT_DOCS.is_dir(), reason=f"{SWIFT_DOCS} is not available here")
def test_every_swift_docs_file_chunks_within_the_hard_limit(cfg):
    files = sorted(p for p in SWIFT_DOCS.rglob("*") if p.suffix in (".md", ".txt"))
    assert files
    contents = []
    for path in files:
        pieces = chunk_markdown(path.read_text(encoding="utf-8"), cfg, title=path.stem)
        assert pieces or not path.read_text().strip(), path
        contents += [p.content for p in pieces]
    assert max(cfg.counter.count_many(contents)) <= cfg.max_tokens
