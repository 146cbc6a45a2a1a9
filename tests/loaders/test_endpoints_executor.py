"""The `endpoints` executor (loaders/executors/endpoints.py) against local servers speaking
the OpenAI `/v1/embeddings` protocol: shards spread over the pool, moved off a server that
dies, never given to a server of another model, and failed (not lost) when no server is
left. The end-to-end run over real model servers is tests/flows/test_embed_endpoints.py."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from core.embedding.identity import ModelIdentity
from core.settings import Settings
from core.store.sqlite.store import SQLiteStore
from loaders.executors.endpoints import PROBE_TEXTS, EndpointsExecutor
from loaders.executors.worker import ShardOutcome, ShardTask
from loaders.shards import plan_shards, read_texts
from tests.fixtures.embedding.openai_server import closed_port_endpoint, running_server
from tests.support.fake_runtime import FakeEmbedder, text_vector
from tests.support.store_contract import batch_of, make_chunk

DIM = 384
SHARDS = 6


@pytest.fixture
def tasks(tmp_path: Path) -> list[ShardTask]:
    """Six shards of two chunks each, for an index of a 384-d model."""
    index = SQLiteStore(tmp_path / "indexes").open_index("pool", create=True)
    index.bind_model("sentence-transformers/all-MiniLM-L6-v2", DIM)
    chunks = [make_chunk(f"c{i}", f"d{i}", content=f"text number {i}") for i in range(12)]
    index.apply(batch_of(chunks, without_vectors=True))
    shards = plan_shards(
        index, "m", tmp_path / "spool", shard_tokens=2, count_tokens=lambda t: [1] * len(t)
    )
    index.close()
    assert len(shards) == SHARDS
    identity = ModelIdentity("sentence-transformers/all-MiniLM-L6-v2", "", "http", "fp32", DIM)
    return [ShardTask(shard, Settings(), identity) for shard in shards]


def executor(*endpoints: str, **options: float) -> EndpointsExecutor:
    settings = Settings(embedding_timeout_s=5)
    return EndpointsExecutor(
        list(endpoints),
        settings,
        concurrency=2,
        attempts=int(options.pop("attempts", 3)),
        recheck_s=options.pop("recheck_s", 0.2),
        give_up_s=options.pop("give_up_s", 1.0),
    )


def run(pool: EndpointsExecutor, tasks: list[ShardTask]) -> list[ShardOutcome]:
    return list(pool.run(tasks, FakeEmbedder(dim=DIM)))


def assert_every_text_embedded_once(outcomes: list[ShardOutcome], tasks: list[ShardTask]):
    expected = {k: t for task in tasks for k, t in zip(*read_texts(task.shard), strict=True)}
    keys = [k for o in outcomes for k in o.keys]
    assert sorted(keys) == sorted(expected)
    for outcome in outcomes:
        assert outcome.vectors is not None
        for key, vector in zip(outcome.keys, outcome.vectors, strict=True):
            want = text_vector(expected[key], DIM)
            assert (
                float(vector @ want) / float(np.linalg.norm(vector) * np.linalg.norm(want)) > 0.9999
            )


def shard_requests(server) -> int:
    """Requests beyond the probe's (its dimension, then its texts)."""
    probe = {*PROBE_TEXTS, "dimension probe"}
    return sum(1 for body in server.requests if not set(body["input"]) <= probe)


def test_the_shards_are_spread_over_every_server_of_the_pool(tasks):
    with running_server(DIM) as one, running_server(DIM) as two:
        outcomes = run(executor(one.endpoint, two.endpoint), tasks)
    assert all(o.ok and o.attempts == 1 for o in outcomes) and len(outcomes) == SHARDS
    assert_every_text_embedded_once(outcomes, tasks)
    # The first four go out in rotation, two per server; the rest to whichever frees up.
    served = Counter(o.worker for o in outcomes)
    assert set(served) == {one.endpoint, two.endpoint} and min(served.values()) >= 2
    assert (shard_requests(one), shard_requests(two)) == (
        served[one.endpoint],
        served[two.endpoint],
    )


def test_a_server_that_dies_mid_run_hands_its_shards_to_the_others(tasks):
    with running_server(DIM) as dying, running_server(DIM) as steady:
        dying.die_after = 3  # the probe's two requests and one shard, then it drops them
        outcomes = run(executor(dying.endpoint, steady.endpoint), tasks)
    assert all(o.ok for o in outcomes) and len(outcomes) == SHARDS
    assert_every_text_embedded_once(outcomes, tasks)
    moved = [o for o in outcomes if o.attempts > 1]
    assert moved and all(o.worker == steady.endpoint for o in moved)
    assert Counter(o.worker for o in outcomes)[dying.endpoint] == 1


def test_a_server_of_another_model_is_refused_and_never_given_a_shard(tasks):
    with running_server(DIM) as impostor, running_server(DIM) as right:
        impostor.mode = "other"
        outcomes = run(executor(impostor.endpoint, right.endpoint), tasks)
    assert all(o.ok and o.worker == right.endpoint for o in outcomes)
    assert shard_requests(impostor) == 0


def test_a_pool_of_servers_of_another_dimension_fails_each_shard_saying_why(tasks):
    with running_server(768) as wider:
        outcomes = run(executor(wider.endpoint), tasks)
    assert len(outcomes) == SHARDS and not any(o.ok for o in outcomes)
    assert "768-d, the index's model's 384-d" in outcomes[0].error
    assert shard_requests(wider) == 0


def test_when_no_server_answers_the_shards_are_reported_failed_not_lost(tasks):
    down = closed_port_endpoint()
    outcomes = run(executor(down), tasks)
    assert len(outcomes) == SHARDS and not any(o.ok for o in outcomes)
    assert all(down in (o.error or "") and o.attempts == 0 for o in outcomes)


def test_a_shard_that_fails_on_every_run_is_reported_failed_after_its_attempts(tasks):
    probe = {*PROBE_TEXTS, "dimension probe"}
    with running_server(DIM) as failing:
        failing.fails_on = lambda texts: not set(texts) <= probe  # probes pass, shards fail
        outcomes = run(executor(failing.endpoint, attempts=2), tasks[:1])
    (outcome,) = outcomes
    assert not outcome.ok and outcome.attempts == 2
    assert shard_requests(failing) == 2
    assert (outcome.error or "").startswith(f"{failing.endpoint}: EmbeddingHTTPError")
