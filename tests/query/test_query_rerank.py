"""Rerankers: the HTTP APIs (TEI and Cohere/Jina) against local servers speaking their real
shapes, the time budget, degradation in the pipeline, loading rules, and the local
CrossEncoder path on a real (if untrained) model."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from core.settings import Settings
from query.retrieval.pipeline import answer
from query.retrieval.rerank import (
    NOT_CONFIGURED,
    CrossEncoderReranker,
    HTTPReranker,
    RerankAPI,
    RerankerUnavailable,
    load_reranker,
    mlx_available,
    rerank_apis,
    score_in_batches,
)
from query.types import QueryRequest
from tests.support.fake_services import Reply, cohere_handler, serving, tei_handler
from tests.support.models import default_model_dir
from tests.support.query import FakeIndex, fake_engine, row

QUERY = "swiftdata model"
PASSAGES = ["unrelated text", "define a swiftdata model", "a model"]
EXPECTED = [0.0, 1.0, 0.5]  # overlap_score of each passage with QUERY


@pytest.mark.parametrize(
    ("endpoint", "apis"),
    [
        ("http://h/rerank", [("tei", "http://h/rerank")]),
        ("http://h/v1/rerank", [("cohere", "http://h/v1/rerank")]),
        ("http://h/v2/rerank/", [("cohere", "http://h/v2/rerank")]),
        ("http://h/v1", [("cohere", "http://h/v1/rerank")]),
        (
            "http://h:8080/",
            [("tei", "http://h:8080/rerank"), ("cohere", "http://h:8080/v1/rerank")],
        ),
    ],
)
def test_the_api_follows_from_the_url_path(endpoint, apis):
    assert rerank_apis(endpoint) == [RerankAPI(kind, url) for kind, url in apis]


def test_tei_scores_come_back_in_passage_order():
    with serving({"/rerank": tei_handler()}) as server:
        scores = HTTPReranker(server.url + "/rerank").score(QUERY, PASSAGES, budget_ms=5000)
    assert scores == EXPECTED
    assert server.received[0].body == {"query": QUERY, "texts": PASSAGES, "truncate": True}


def test_cohere_scores_come_back_in_passage_order():
    with serving({"/v1/rerank": cohere_handler()}) as server:
        reranker = HTTPReranker(server.url + "/v1/rerank", model="rerank-v3.5")
        scores = reranker.score(QUERY, PASSAGES, budget_ms=5000)
    assert scores == EXPECTED
    assert server.received[0].body == {
        "query": QUERY,
        "documents": PASSAGES,
        "top_n": 3,
        "model": "rerank-v3.5",
    }


def test_a_bare_url_tries_tei_then_cohere_and_keeps_the_one_that_answered():
    with serving({"/v1/rerank": cohere_handler()}) as server:
        reranker = HTTPReranker(server.url)
        first = reranker.score(QUERY, PASSAGES, budget_ms=5000)
        second = reranker.score(QUERY, PASSAGES, budget_ms=5000)
    assert first == second == EXPECTED
    assert server.paths() == ["/rerank", "/v1/rerank", "/v1/rerank"]


def test_a_bare_url_on_a_tei_server_uses_tei_only():
    with serving({"/rerank": tei_handler()}) as server:
        assert HTTPReranker(server.url).score(QUERY, PASSAGES, budget_ms=5000) == EXPECTED
    assert server.paths() == ["/rerank"]


def test_passages_are_sent_in_batches():
    with serving({"/rerank": tei_handler()}) as server:
        reranker = HTTPReranker(server.url + "/rerank", batch_size=2)
        assert reranker.score(QUERY, PASSAGES, budget_ms=5000) == EXPECTED
    assert [len(r.body["texts"]) for r in server.received] == [2, 1]


def test_a_server_slower_than_the_budget_leaves_every_passage_unscored():
    with serving({"/rerank": tei_handler(delay_s=2.0)}) as server:
        scores = HTTPReranker(server.url + "/rerank").score(QUERY, PASSAGES, budget_ms=300)
    assert scores == [None, None, None]


def test_batches_after_the_budget_runs_out_stay_unscored():
    # The first batch ends at ~1.0 s, inside the 1.6 s budget; the second would end at ~2.0 s.
    # Margins of 0.6 s either way, so a loaded machine does not flip the outcome.
    with serving({"/rerank": tei_handler(delay_s=1.0)}) as server:
        reranker = HTTPReranker(server.url + "/rerank", batch_size=2)
        scores = reranker.score(QUERY, PASSAGES, budget_ms=1600)
    assert scores == [0.0, 1.0, None]


def test_http_500_raises_reranker_unavailable():
    with (
        serving({"/rerank": lambda r: Reply(500, {"error": "CUDA out of memory"})}) as server,
        pytest.raises(RerankerUnavailable, match="HTTP 500"),
    ):
        HTTPReranker(server.url + "/rerank").score(QUERY, PASSAGES, budget_ms=5000)


@pytest.mark.parametrize(
    "body",
    [b"not json", {"results": []}, [{"index": 7, "score": 1.0}], [{"index": 0, "score": "high"}]],
)
def test_a_malformed_tei_reply_raises_reranker_unavailable(body):
    with (
        serving({"/rerank": lambda r: Reply(body=body)}) as server,
        pytest.raises(RerankerUnavailable),
    ):
        HTTPReranker(server.url + "/rerank").score(QUERY, PASSAGES, budget_ms=5000)


def test_a_refused_connection_raises_reranker_unavailable():
    with serving({}) as server:
        url = server.url
    with pytest.raises(RerankerUnavailable, match="unreachable"):
        HTTPReranker(url + "/rerank").score(QUERY, PASSAGES, budget_ms=2000)


def test_the_clock_is_checked_before_every_batch():
    now = [0.0]

    def slow_batch(batch, left):
        now[0] += 0.4  # each batch takes 400 ms of the fake clock
        return [1.0] * len(batch)

    scores = score_in_batches(["p"] * 5, 1000, 1, slow_batch, clock=lambda: now[0])
    assert scores == [1.0, 1.0, 1.0, None, None]


# In the pipeline


def pipeline_engine(reranker, settings=None):
    rows = [row("a", "unrelated text"), row("b", "define a swiftdata model")]
    return fake_engine(FakeIndex("docs", rows), reranker=reranker, settings=settings)


def ask(engine):
    return answer(QueryRequest(query=QUERY, expand=False), engine)


def test_the_pipeline_reorders_by_http_reranker_scores():
    with serving({"/v1/rerank": cohere_handler()}) as server:
        response = ask(pipeline_engine(HTTPReranker(server.url + "/v1/rerank")))
    assert [c["chunk_id"] for c in response.chunks] == ["b", "a"]
    assert response.chunks[0]["ranks"]["rerank"] == 1


def test_a_failing_reranker_degrades_the_answer_and_keeps_fused_order():
    with serving({"/rerank": lambda r: Reply(500, {"error": "boom"})}) as server:
        response = ask(pipeline_engine(HTTPReranker(server.url + "/rerank")))
    assert [c["chunk_id"] for c in response.chunks] == ["a", "b"]
    assert any(n.startswith("degraded: reranker failed") for n in response.notes)


def test_a_slow_reranker_degrades_the_answer_within_the_budget():
    with serving({"/rerank": tei_handler(delay_s=3.0)}) as server:
        reranker = HTTPReranker(server.url + "/rerank")
        response = ask(pipeline_engine(reranker, Settings(rerank_budget_ms=300)))
    assert any(
        n.startswith("degraded: reranker scored nothing within 300 ms") for n in response.notes
    )
    assert response.timings_ms["rerank"] < 2000


# Loading


def test_nothing_configured_means_no_reranker_and_says_so():
    assert load_reranker(Settings()) == (None, [NOT_CONFIGURED])


def test_an_endpoint_gives_an_http_reranker_without_contacting_it():
    reranker, notes = load_reranker(Settings(reranker_endpoint="http://127.0.0.1:9/v1/rerank"))
    assert isinstance(reranker, HTTPReranker)
    assert notes == ["reranking over HTTP: cohere http://127.0.0.1:9/v1/rerank"]


def test_the_endpoint_wins_over_a_local_model_and_sends_its_name():
    settings = Settings(reranker_endpoint="http://h/v1/rerank", reranker_model="jina-reranker-v2")
    reranker, _ = load_reranker(settings)
    assert isinstance(reranker, HTTPReranker) and reranker.model == "jina-reranker-v2"


def test_mlx_is_never_reported_off_apple_silicon():
    assert not mlx_available("Linux", "x86_64")
    assert not mlx_available("Darwin", "x86_64")


def test_a_missing_model_directory_gives_no_reranker_and_a_note(tmp_path):
    reranker, notes = load_reranker(Settings(reranker_model=str(tmp_path / "nope")))
    assert reranker is None
    assert "not a local directory" in notes[-1]


def test_a_bi_encoder_is_refused_as_a_reranker():
    """MiniLM would load with a random classification head and rank by noise."""
    reranker, notes = load_reranker(Settings(reranker_model=default_model_dir()))
    assert reranker is None
    assert "is not a cross-encoder (config.json architectures: BertModel)" in notes[-1]


def tiny_cross_encoder(target: Path) -> Path:
    """The packaged MiniLM's BERT weights under a sequence-classification config with one
    label: a real model directory that CrossEncoder loads from local files, but its
    classifier head is freshly initialised, so the scores mean nothing (no trained
    cross-encoder is available offline here)."""
    source = Path(default_model_dir())
    target.mkdir()
    for name in ("model.safetensors", "tokenizer.json", "tokenizer_config.json", "vocab.txt"):
        shutil.copy(source / name, target / name)
    if (source / "special_tokens_map.json").is_file():
        shutil.copy(source / "special_tokens_map.json", target / "special_tokens_map.json")
    config = json.loads((source / "config.json").read_text())
    config.update(
        architectures=["BertForSequenceClassification"],
        num_labels=1,
        id2label={"0": "LABEL_0"},
        label2id={"LABEL_0": 0},
    )
    (target / "config.json").write_text(json.dumps(config))
    return target


@pytest.fixture(scope="module")
def cross_encoder(tmp_path_factory):
    model_dir = tiny_cross_encoder(tmp_path_factory.mktemp("reranker") / "tiny-ce")
    reranker, notes = load_reranker(Settings(reranker_model=str(model_dir)))
    return reranker, notes


@pytest.mark.slow
def test_a_local_cross_encoder_loads_from_files_and_scores_every_passage(cross_encoder):
    reranker, notes = cross_encoder
    assert isinstance(reranker, CrossEncoderReranker), notes
    scores = reranker.score(QUERY, PASSAGES, budget_ms=30_000)
    assert len(scores) == 3 and all(isinstance(s, float) for s in scores)
    assert notes[-1].startswith("reranking with cross-encoder")


@pytest.mark.slow
def test_a_local_cross_encoder_with_no_budget_left_scores_nothing(cross_encoder):
    reranker, _ = cross_encoder
    assert reranker.score(QUERY, PASSAGES, budget_ms=0) == [None, None, None]


@pytest.mark.slow
def test_local_cross_encoder_scores_are_in_small_batches(cross_encoder):
    reranker, _ = cross_encoder
    calls = []
    predict = reranker.model.predict
    reranker.model.predict = lambda pairs, **kw: calls.append(len(pairs)) or predict(pairs, **kw)
    try:
        reranker.score(QUERY, ["p"] * 19, budget_ms=60_000)
    finally:
        reranker.model.predict = predict
    assert calls == [8, 8, 3]
