"""What a worker does with a shard (loaders/executors/worker.py), in this process: the real
model, loaded once per process, refused when it is not the index's."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from core.embedding.identity import model_identity
from core.settings import Settings
from core.store.sqlite.store import SQLiteStore
from loaders.executors.worker import IdentityRefused, ShardTask, embed_shard, worker_embedder
from loaders.shards import plan_shards
from tests.support.store_contract import batch_of, make_chunk

pytestmark = pytest.mark.slow


@pytest.fixture
def shard_task(tmp_path: Path) -> ShardTask:
    settings = Settings()
    embedder = worker_embedder(settings)
    index = SQLiteStore(tmp_path / "indexes").open_index("worker", create=True)
    index.bind_model(embedder.model_id, embedder.dim)
    chunks = [make_chunk(f"c{i}", f"d{i}", content=f"text number {i}") for i in range(3)]
    index.apply(batch_of(chunks, without_vectors=True))
    (shard,) = plan_shards(
        index, "m", tmp_path / "spool", shard_tokens=1000, count_tokens=lambda t: [1] * len(t)
    )
    index.close()
    return ShardTask(shard, settings, model_identity(embedder))


def test_a_worker_embeds_a_shard_with_the_model_it_loaded_once(shard_task):
    outcome = embed_shard(shard_task)
    assert outcome.ok and outcome.embedded == 3
    assert outcome.vectors is not None and outcome.vectors.shape == (3, 384)
    assert np.allclose(np.linalg.norm(outcome.vectors, axis=1), 1.0, atol=1e-5)
    assert worker_embedder(shard_task.settings) is worker_embedder(shard_task.settings)


def test_a_worker_whose_model_is_not_the_index_s_is_refused(shard_task):
    other = replace(shard_task, identity=replace(shard_task.identity, dim=768))
    with pytest.raises(IdentityRefused, match="dim: 384 != 768"):
        embed_shard(other)
