"""The batching shared by all runtimes, on a fake runtime: prefixes, order, stats, shape."""

from __future__ import annotations

import numpy as np
import pytest

from core.embedding.base import pool_hidden
from core.embedding.models import model_spec
from tests.support.fake_runtime import FakeEmbedder, text_vector

TEXTS = ["one", "two three four five six seven", "eight nine", "a b c d", "x y z", "long " * 5]


def unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v)


def test_queries_and_documents_get_the_model_prefixes():
    fake = FakeEmbedder(model_spec("nomic-ai/nomic-embed-text-v1.5"))
    fake.embed_queries(["how to sort"])
    fake.embed_documents(["def sort(): ..."])
    assert fake.embedded_texts == ["search_query: how to sort", "search_document: def sort(): ..."]


def test_a_model_without_prefixes_embeds_text_unchanged():
    fake = FakeEmbedder(model_spec("all-MiniLM-L6-v2"))
    fake.embed_queries(["how to sort"])
    assert fake.embedded_texts == ["how to sort"]


def test_rows_come_back_in_input_order_although_batches_are_length_sorted():
    fake = FakeEmbedder(batch_size=2)
    vectors = fake.embed_documents(TEXTS)
    expected = np.stack([unit(text_vector(t, fake.dim)) for t in TEXTS])
    np.testing.assert_allclose(vectors, expected, rtol=1e-6)
    sizes = [len(t.split()) for batch in fake.batches for t in batch]
    assert sizes == sorted(sizes, reverse=True)


def test_rows_are_unit_length_float32():
    vectors = FakeEmbedder().embed_documents(TEXTS)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-6)


def test_empty_input_gives_an_empty_matrix_of_the_right_width():
    fake = FakeEmbedder(dim=8)
    assert fake.embed_queries([]).shape == (0, 8)
    assert fake.batches == []


def test_batch_size_bounds_every_batch():
    fake = FakeEmbedder(batch_size=4)
    fake.embed_documents(TEXTS)
    assert [len(b) for b in fake.batches] == [4, 2]


def test_a_token_budget_puts_fewer_long_texts_and_more_short_texts_in_a_batch():
    # Lengths in words (max_length 6): 6, 6, 5, 4, 3, 2, 1, 1; budget 12 padded positions.
    texts = ["w " * 6, "v " * 6, "u " * 5, "t " * 4, "s " * 3, "r r", "q", "p"]
    fake = FakeEmbedder(batch_size=8, batch_tokens=12)
    fake.embed_documents(texts)
    assert [[len(t.split()) for t in b] for b in fake.batches] == [
        [6, 6],
        [5, 4],
        [3, 2, 1, 1],
    ]


def test_a_token_budget_never_exceeds_the_batch_size():
    fake = FakeEmbedder(batch_size=2, batch_tokens=100)
    fake.embed_documents(["a", "b", "c", "d", "e"])
    assert [len(b) for b in fake.batches] == [2, 2, 1]


def test_a_text_longer_than_the_budget_is_embedded_alone():
    fake = FakeEmbedder(batch_size=4, batch_tokens=3)
    fake.embed_documents(["x " * 6, "y " * 6, "z"])
    assert [len(b) for b in fake.batches] == [1, 1, 1]


def test_stats_record_real_and_padded_tokens_of_the_last_call():
    fake = FakeEmbedder(batch_size=2)
    fake.embed_documents(["a b c", "a b", "a", "a"])
    stats = fake.last_stats
    assert (stats.texts, stats.tokens, stats.padded_tokens, stats.batches) == (4, 7, 8, 2)
    assert stats.padding_waste == pytest.approx(1 / 8)
    assert stats.seconds > 0


def test_stats_count_texts_longer_than_max_length_as_truncated():
    fake = FakeEmbedder()  # max_length 6 words
    fake.embed_documents(["w " * 7, "w " * 6, "w"])
    assert fake.last_stats.truncated == 1


def test_total_stats_accumulate_over_calls():
    fake = FakeEmbedder()
    fake.embed_documents(TEXTS)
    fake.embed_queries(["q"])
    assert fake.total_stats.texts == len(TEXTS) + 1


def test_progress_callback_sees_the_final_count():
    seen = []
    fake = FakeEmbedder(batch_size=2)
    fake.on_progress = seen.append
    fake.embed_documents(TEXTS)
    assert seen[-1].done == len(TEXTS) == seen[-1].total


HIDDEN = np.array([[[1.0, 0.0], [3.0, 4.0], [9.0, 9.0]], [[2.0, 2.0], [0.0, 6.0], [5.0, 1.0]]])
MASK = np.array([[1, 1, 0], [1, 1, 1]])


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("cls", [[1.0, 0.0], [2.0, 2.0]]),
        ("mean", [[2.0, 2.0], [7 / 3, 3.0]]),
        ("max", [[3.0, 4.0], [5.0, 6.0]]),
        ("lasttoken", [[3.0, 4.0], [5.0, 1.0]]),
    ],
)
def test_pooling_ignores_padding(mode, expected):
    np.testing.assert_allclose(pool_hidden(np, HIDDEN, MASK, mode), expected)
