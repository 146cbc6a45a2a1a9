"""Chunks loaded without vectors and given them later, as every store keeps them: part of the
contract suite, pulled into a backend's test module with
`from tests.support.store_contract_pending import *`. An ingest's lexical phase loads chunks
with no vector (LoadBatch.vectors None); its vector phase pages through `pending_vectors` and
writes with `put_vectors`, which must never attach a vector to text it was not computed from."""

from __future__ import annotations

import numpy as np
import pytest

from core.store.contract import ShardMark, StoreError
from tests.support.store_contract import ALL, batch_of, fixture_chunks, ids, make_chunk, vector_for


def pending_ids(index, after: str = "", limit: int = 100) -> list[str]:
    return [p.chunk_id for p in index.pending_vectors(after, limit)]


def embed(index, chunk_ids: list[str]) -> int:
    """What a vector phase does for these pending chunks: their vectors, by the hash read."""
    pending = {p.chunk_id: p for p in index.pending_vectors("", 1000)}
    hashes = [pending[c].content_hash for c in chunk_ids]
    return index.put_vectors(chunk_ids, hashes, np.stack([vector_for(c) for c in chunk_ids]))


def test_chunks_loaded_without_vectors_answer_keyword_but_not_vector_searches(index):
    chunks = fixture_chunks()
    index.apply(batch_of(chunks, without_vectors=True))
    stats = index.stats()
    assert (stats["chunks"], stats["vectors"]) == (len(chunks), 0)
    assert index.bm25_search("navigation", ALL, 10)
    assert index.vector_search(vector_for(chunks[0].chunk_id), ALL, 10) == []


def test_pending_chunks_are_listed_in_id_order_with_the_text_to_embed(index):
    chunks = fixture_chunks()
    index.apply(batch_of(chunks, without_vectors=True))
    pending = index.pending_vectors("", 100)
    assert [(p.chunk_id, p.doc_id) for p in pending] == sorted(
        (c.chunk_id, c.doc_id) for c in chunks
    )
    by_id = {c.chunk_id: c for c in chunks}
    for row in pending:
        chunk = by_id[row.chunk_id]
        assert (row.content, row.context or "", row.content_hash, row.language) == (
            chunk.content,
            chunk.context or "",
            chunk.content_hash,
            chunk.language,
        )


def test_pending_chunks_page_by_the_last_id_seen(index):
    index.apply(batch_of(fixture_chunks(), without_vectors=True))
    everything = pending_ids(index)
    first = pending_ids(index, "", 2)
    rest = pending_ids(index, first[-1], 100)
    assert first + rest == everything
    assert len(first) == 2


def test_put_vectors_makes_chunks_vector_searchable_and_no_longer_pending(index):
    chunks = fixture_chunks()
    index.apply(batch_of(chunks, without_vectors=True))
    target = chunks[0].chunk_id
    assert embed(index, [target]) == 1
    assert target not in pending_ids(index)
    assert ids(index.vector_search(vector_for(target), ALL, 1)) == [target]
    assert index.stats()["vectors"] == 1


def test_put_vectors_twice_writes_each_vector_once(index):
    chunks = fixture_chunks()
    index.apply(batch_of(chunks, without_vectors=True))
    every = [c.chunk_id for c in chunks]
    hashes = [c.content_hash for c in chunks]
    vectors = np.stack([vector_for(c) for c in every])
    assert index.put_vectors(every, hashes, vectors) == len(every)
    assert index.put_vectors(every, hashes, vectors) == 0
    assert index.stats()["vectors"] == len(every)
    assert pending_ids(index) == []


def test_a_vector_computed_before_its_chunk_changed_is_not_written(index):
    old = make_chunk("c1", "d1", content="the old text", content_hash="h-old")
    index.apply(batch_of([old], without_vectors=True))
    read = index.pending_vectors("", 10)[0]
    new = make_chunk("c1", "d1", content="the new text", content_hash="h-new")
    index.apply(batch_of([new], doc_hash="v2", without_vectors=True))
    assert index.put_vectors(["c1"], [read.content_hash], vector_for("c1")[None, :]) == 0
    assert pending_ids(index) == ["c1"]
    assert index.pending_vectors("", 10)[0].content == "the new text"


def test_a_vector_of_a_deleted_chunk_is_not_written(index):
    gone = make_chunk("c1", "d1")
    index.apply(batch_of([gone], without_vectors=True))
    index.apply(batch_of([], delete=("d1",)))
    assert index.put_vectors(["c1"], [gone.content_hash], vector_for("c1")[None, :]) == 0
    assert index.stats()["vectors"] == 0


def test_a_document_loaded_again_without_vectors_is_pending_again(loaded):
    chunks = [c for c in fixture_chunks() if c.doc_id == "doc-nav"]
    loaded.apply(batch_of(chunks, doc_hash="v2", without_vectors=True))
    assert pending_ids(loaded) == sorted(c.chunk_id for c in chunks)
    replaced = {c.chunk_id for c in chunks}
    found = ids(loaded.vector_search(vector_for(chunks[0].chunk_id), ALL, 10))
    assert not replaced & set(found)


def test_an_index_names_which_of_some_chunks_have_no_vector_yet(index):
    chunks = fixture_chunks()
    index.apply(batch_of(chunks, without_vectors=True))
    asked = [c.chunk_id for c in chunks[:3]] + ["no-such-chunk"]
    assert index.without_vectors(asked) == set(asked[:3])
    assert embed(index, asked[:2]) == 2
    assert index.without_vectors(asked) == {asked[2]}
    assert index.without_vectors([]) == set()


def test_vectors_written_with_a_shard_record_the_shard_done(index):
    chunks = fixture_chunks()
    index.apply(batch_of(chunks, without_vectors=True))
    every = [c.chunk_id for c in chunks]
    vectors = np.stack([vector_for(c) for c in every])
    hashes = [c.content_hash for c in chunks]
    assert index.put_vectors(every, hashes, vectors, shard=ShardMark("s1")) == len(every)
    assert index.shard_states(["s1", "s2"]) == {"s1": "done"}


def test_a_shard_whose_vectors_are_refused_is_not_recorded_done(index):
    chunks = fixture_chunks()
    index.apply(batch_of(chunks, without_vectors=True))
    wrong = np.ones((1, 3), dtype=np.float32)  # not the index's dimension
    with pytest.raises((StoreError, ValueError)):
        index.put_vectors(
            [chunks[0].chunk_id], [chunks[0].content_hash], wrong, shard=ShardMark("s1")
        )
    assert index.shard_states(["s1"]) == {}


def test_a_failed_shard_is_recorded_and_a_later_success_records_it_done(index):
    chunks = fixture_chunks()
    index.apply(batch_of(chunks, without_vectors=True))
    index.record_shard_failure(ShardMark("s1", attempts=3), "KilledWorker: worker died")
    assert index.shard_states(["s1"]) == {"s1": "failed"}
    assert embed_as_shard(index, [chunks[0].chunk_id], "s1") == 1
    assert index.shard_states(["s1"]) == {"s1": "done"}


def test_a_failure_reported_after_a_shard_committed_leaves_it_done(index):
    chunks = fixture_chunks()
    index.apply(batch_of(chunks, without_vectors=True))
    embed_as_shard(index, [chunks[0].chunk_id], "s1")
    index.record_shard_failure(ShardMark("s1", attempts=2), "the worker died after its commit")
    assert index.shard_states(["s1"]) == {"s1": "done"}


def embed_as_shard(index, chunk_ids: list[str], shard_id: str) -> int:
    pending = {p.chunk_id: p for p in index.pending_vectors("", 1000)}
    hashes = [pending[c].content_hash for c in chunk_ids]
    vectors = np.stack([vector_for(c) for c in chunk_ids])
    return index.put_vectors(chunk_ids, hashes, vectors, shard=ShardMark(shard_id))
