"""Shards of a vector phase spread over workers (loaders/shards.py): the pending chunks,
deduplicated by content, cut by a token budget, named by what they hold, written as files
the workers read."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from core.store.sqlite.store import SQLiteStore
from loaders.shards import plan_shards, read_chunks, read_texts, shard_id
from tests.support.store_contract import DIM, MODEL, batch_of, make_chunk

IDENTITY = "test-model"


def words(texts: list[str]) -> list[int]:
    """Token counts for the plan: one per word."""
    return [len(t.split()) for t in texts]


@pytest.fixture
def index(tmp_path: Path):
    opened = SQLiteStore(tmp_path / "indexes").open_index("shards", create=True)
    opened.bind_model(MODEL, DIM)
    yield opened
    opened.close()


def load(index, *texts: str) -> None:
    chunks = [
        make_chunk(f"c{i:02d}", f"d{i:02d}", content=text, content_hash=f"h{i}")
        for i, text in enumerate(texts)
    ]
    index.apply(batch_of(chunks, without_vectors=True))


def plan(index, spool: Path, shard_tokens: int = 100, **options):
    return plan_shards(
        index, IDENTITY, spool, shard_tokens=shard_tokens, count_tokens=words, **options
    )


def test_a_text_held_by_several_chunks_is_embedded_once_for_all_of_them(index, tmp_path):
    load(index, "the same words", "other words", "the same words")
    (shard,) = plan(index, tmp_path)
    keys, texts = read_texts(shard)
    assert sorted(texts) == ["other words", "the same words"]
    chunks = read_chunks(shard)
    assert sorted(chunks.chunk_ids) == ["c00", "c01", "c02"]
    key_of = dict(zip(chunks.chunk_ids, chunks.keys, strict=True))
    assert key_of["c00"] == key_of["c02"] != key_of["c01"]
    assert (shard.texts, shard.chunks) == (2, 3)


def test_shards_stay_within_the_token_budget_and_cover_every_pending_chunk(index, tmp_path):
    load(index, *[f"text {i} " + "word " * 30 for i in range(10)])  # 32 words each
    shards = plan(index, tmp_path, shard_tokens=100)
    assert [s.tokens for s in shards] == [96, 96, 96, 32]
    every = [c for s in shards for c in read_chunks(s).chunk_ids]
    assert sorted(every) == [f"c{i:02d}" for i in range(10)]


def test_a_text_longer_than_the_budget_makes_a_shard_alone(index, tmp_path):
    load(index, "short one", "long " * 500, "short two")
    shards = plan(index, tmp_path, shard_tokens=100)
    assert [s.tokens for s in shards] == [2, 500, 2]


def test_no_shard_holds_more_chunks_than_allowed(index, tmp_path):
    load(index, *[f"text {i}" for i in range(7)])
    shards = plan(index, tmp_path, max_chunks=3)
    assert [s.chunks for s in shards] == [3, 3, 1]


def test_a_shard_planned_again_over_the_same_texts_keeps_its_id(index, tmp_path):
    load(index, "alpha beta", "gamma delta")
    first = plan(index, tmp_path / "one")
    again = plan(index, tmp_path / "two")
    assert [s.shard_id for s in first] == [s.shard_id for s in again]
    keys, _ = read_texts(first[0])
    assert first[0].shard_id == shard_id(IDENTITY, list(reversed(keys)))


def test_another_model_makes_other_shards_of_the_same_texts(index, tmp_path):
    load(index, "alpha beta")
    ours = plan(index, tmp_path / "one")
    theirs = plan_shards(
        index, "another-model", tmp_path / "two", shard_tokens=100, count_tokens=words
    )
    assert ours[0].shard_id != theirs[0].shard_id


def test_chunks_with_vectors_are_not_planned(index, tmp_path):
    load(index, "alpha", "beta")
    assert sum(s.chunks for s in plan(index, tmp_path)) == 2
    (pending,) = [p for p in index.pending_vectors("", 10) if p.chunk_id == "c00"]
    index.put_vectors(["c00"], [pending.content_hash], np.eye(1, DIM, dtype=np.float32))
    (shard,) = plan(index, tmp_path)
    assert read_chunks(shard).chunk_ids == ["c01"]
