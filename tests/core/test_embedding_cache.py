"""The embedding cache: what was embedded once by a model is served, not recomputed."""

from __future__ import annotations

import hashlib
import sqlite3

import numpy as np
import pytest

from core.embedding.cache import (
    EmbeddingCache,
    EmbeddingCacheError,
    cache_key,
    embed_with_cache,
    vector_identity,
)
from core.embedding.models import ModelSpec
from tests.support.fake_runtime import FakeEmbedder

TEXTS = ["def add(a, b):", "class Store:", "SELECT 1", "# Heading"]


@pytest.fixture
def cache(tmp_path):
    with EmbeddingCache(tmp_path / "indexes" / "embedding-cache.sqlite") as cache:
        yield cache


def test_second_call_embeds_nothing_and_returns_identical_vectors(cache):
    fake = FakeEmbedder()
    first, hits1, embedded1 = embed_with_cache(fake, cache, TEXTS)
    second, hits2, embedded2 = embed_with_cache(fake, cache, TEXTS)
    assert (hits1, embedded1, hits2, embedded2) == (0, 4, 4, 0)
    assert len(fake.batches) == 1
    np.testing.assert_array_equal(first, second)


def test_only_new_texts_are_embedded(cache):
    fake = FakeEmbedder()
    embed_with_cache(fake, cache, TEXTS[:2])
    _, hits, embedded = embed_with_cache(fake, cache, TEXTS)
    assert (hits, embedded) == (2, 2)
    assert fake.embedded_texts[2:] == TEXTS[2:]


def test_entries_are_keyed_by_model_id(cache):
    embed_with_cache(FakeEmbedder(), cache, TEXTS)
    other = FakeEmbedder(ModelSpec(model_id="fake/other-model", dim=8))
    _, hits, embedded = embed_with_cache(other, cache, TEXTS)
    assert (hits, embedded) == (0, 4)


def test_repeated_texts_are_embedded_once(cache):
    fake = FakeEmbedder()
    vectors, _, embedded = embed_with_cache(fake, cache, ["same", "other", "same"])
    assert embedded == 2
    np.testing.assert_array_equal(vectors[0], vectors[2])


def test_cached_vectors_are_the_embedders_document_vectors(cache):
    fake = FakeEmbedder()
    cached, _, _ = embed_with_cache(fake, cache, TEXTS)
    np.testing.assert_array_equal(cached, FakeEmbedder().embed_documents(TEXTS))


def test_vectors_survive_reopening_the_file(tmp_path):
    path = tmp_path / "cache.sqlite"
    with EmbeddingCache(path) as cache:
        embed_with_cache(FakeEmbedder(), cache, TEXTS)
    with EmbeddingCache(path) as cache:
        found, missing = cache.get_many("fake/model", TEXTS)
    assert (sorted(found), missing) == ([0, 1, 2, 3], [])


def test_get_many_reports_positions_of_misses(cache):
    cache.put_many("m", ["a", "c"], np.ones((2, 3), dtype=np.float32))
    found, missing = cache.get_many("m", ["a", "b", "c", "d"])
    assert (sorted(found), missing) == ([0, 2], [1, 3])
    assert found[0].dtype == np.float32 and found[0].shape == (3,)


def test_key_is_sha256_of_model_id_nul_text():
    expected = hashlib.sha256(b"model\x00text").hexdigest()
    assert cache_key("model", "text") == expected


def test_file_uses_write_ahead_logging(cache):
    mode = sqlite3.connect(cache.path).execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


def test_a_corrupt_file_is_reported_by_path(tmp_path):
    path = tmp_path / "embedding-cache.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(EmbeddingCacheError, match=str(path)):
        EmbeddingCache(path)


def test_a_damaged_entry_is_reported_by_path(cache):
    cache.put_many("m", ["a"], np.ones((1, 4), dtype=np.float32))
    with sqlite3.connect(cache.path) as conn:
        conn.execute("UPDATE embeddings SET vector = x'0102'")
    with pytest.raises(EmbeddingCacheError, match=str(cache.path)):
        cache.get_many("m", ["a"])


def test_without_a_cache_everything_is_embedded():
    _, hits, embedded = embed_with_cache(FakeEmbedder(), None, TEXTS)
    assert (hits, embedded) == (0, 4)


def test_a_cache_held_by_another_run_costs_a_warning_not_the_run(tmp_path, caplog):
    path = tmp_path / "cache.sqlite"
    EmbeddingCache(path).close()
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another ingest in the middle of its write
    try:
        with EmbeddingCache(path, busy_timeout_s=0.1) as cache:
            cache.put_many("m", ["text"], np.ones((1, 4), dtype=np.float32))
            assert cache.count() == 0
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert "busy; 1 vectors not cached" in caplog.text


def test_opening_a_ready_cache_writes_nothing(tmp_path):
    path = tmp_path / "cache.sqlite"
    EmbeddingCache(path).close()
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        EmbeddingCache(path, busy_timeout_s=0.1).close()  # would time out if it wrote
    finally:
        other.execute("ROLLBACK")
        other.close()


def test_precisions_never_share_cached_vectors(cache):
    fp32 = FakeEmbedder()
    int8 = FakeEmbedder()
    int8.precision = "int8"
    embed_with_cache(fp32, cache, TEXTS)
    _, hits, embedded = embed_with_cache(int8, cache, TEXTS)
    assert (hits, embedded) == (0, 4)
    _, hits, _ = embed_with_cache(int8, cache, TEXTS)
    assert hits == 4


def test_fp32_entries_keep_the_key_they_had_before_precisions_existed(cache):
    assert vector_identity("fake/model", "fp32") == "fake/model"
    assert vector_identity("fake/model", "int8").startswith("fake/model@int8:")
    embed_with_cache(FakeEmbedder(), cache, TEXTS)
    found, missing = cache.get_many("fake/model", TEXTS)
    assert (len(found), missing) == (4, [])
