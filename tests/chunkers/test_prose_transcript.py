"""Talk transcripts → topic pieces, by lexical cohesion or a sentence embedder."""

from __future__ import annotations

import re
import zlib
from dataclasses import replace

import numpy as np

from chunkers.prose.sentences import split_sentences
from chunkers.prose.transcript import chunk_transcript
from tests.support.paths import FIXTURES

TRANSCRIPT = (FIXTURES / "prose" / "wwdc_transcript.txt").read_text()
LAST_PERSISTENCE_SENTENCE = "a context and a save to the store."
FIRST_CHARTS_SENTENCE = "Now let's switch gears and talk about Swift Charts"
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "the",
        "to",
        "of",
        "in",
        "on",
        "is",
        "are",
        "it",
        "its",
        "you",
        "your",
        "with",
        "for",
        "that",
        "this",
        "by",
        "as",
        "at",
        "be",
        "or",
        "if",
        "from",
        "each",
        "i",
        "i'm",
        "we",
        "let's",
    ]
)


def bag_of_words(texts):
    """A deterministic stand-in for a sentence model: hashed, crudely stemmed content words,
    L2-normalised. Windows about the same topic share words, so they come out similar."""
    vectors = np.zeros((len(texts), 1024))
    for row, text in enumerate(texts):
        for word in re.findall(r"[a-z']+", text.lower()):
            if word not in STOPWORDS:
                vectors[row, zlib.crc32(word.rstrip("s").encode()) % 1024] += 1
    return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)


def words(text: str) -> list[str]:
    return text.split()


def test_semantic_boundary_falls_at_the_topic_shift(cfg):
    pieces = chunk_transcript(TRANSCRIPT, replace(cfg, sentence_embedder=bag_of_words))
    ends_topic = [p for p in pieces if p.content.endswith(LAST_PERSISTENCE_SENTENCE)]
    assert len(ends_topic) == 1
    assert ends_topic[0].metadata["boundary"] == "semantic"
    assert pieces[pieces.index(ends_topic[0]) + 1].content.startswith(FIRST_CHARTS_SENTENCE)


def test_without_an_embedder_the_boundary_falls_at_the_shift_in_vocabulary(cfg):
    pieces = chunk_transcript(TRANSCRIPT, cfg)
    ends_topic = [p for p in pieces if p.content.endswith(LAST_PERSISTENCE_SENTENCE)]
    assert len(ends_topic) == 1
    assert ends_topic[0].metadata["boundary"] == "semantic"
    assert pieces[pieces.index(ends_topic[0]) + 1].content.startswith(FIRST_CHARTS_SENTENCE)


def test_a_single_sentence_is_one_piece_cut_by_size(cfg):
    (piece,) = chunk_transcript("Welcome to the session.", cfg)
    assert piece.metadata["boundary"] == "size"


def test_pieces_hold_whole_sentences_in_order_without_loss(cfg):
    for config in (cfg, replace(cfg, sentence_embedder=bag_of_words)):
        pieces = chunk_transcript(TRANSCRIPT, config)
        assert [w for p in pieces for w in words(p.content)] == words(TRANSCRIPT)
        sentence_texts = {TRANSCRIPT[a:b] for a, b in split_sentences(TRANSCRIPT)}
        assert all(
            p.content.startswith(tuple(sentence_texts))
            and p.content.endswith(tuple(sentence_texts))
            for p in pieces
        )


def test_pieces_are_topics_with_line_numbers(cfg):
    text = "First line talks.\nSecond line talks.\n"
    (piece,) = chunk_transcript(text, cfg)
    assert (piece.kind, piece.start_line, piece.end_line) == ("topic", 1, 2)


def test_run_on_text_without_punctuation_respects_the_hard_limit(small_cfg):
    text = " ".join(f"word{i} and then some more talking" for i in range(300))
    pieces = chunk_transcript(text, small_cfg)
    assert len(pieces) > 1
    assert all(small_cfg.count(p.content) <= small_cfg.max_tokens for p in pieces)
    assert [w for p in pieces for w in words(p.content)] == words(text)


def test_semantic_pieces_never_exceed_the_target(small_cfg):
    pieces = chunk_transcript(TRANSCRIPT, replace(small_cfg, sentence_embedder=bag_of_words))
    assert all(small_cfg.count(p.content) <= small_cfg.target_tokens for p in pieces)


def test_empty_transcript_gives_no_pieces(cfg):
    assert chunk_transcript("  \n", replace(cfg, sentence_embedder=bag_of_words)) == []
