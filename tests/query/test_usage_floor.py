"""The adaptive rule's usage floor (query/retrieval/adaptive.py, USAGE_KEYWORD_FLOOR): a
question about what uses something gives the keyword leg most of the say where every
searched index's calibration found it code. Asked of a small real index of code
(tests/fixtures/identifiers/app)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from core.store.sqlite.store import SQLiteStore
from query.calibration.calibrate import Calibration
from query.retrieval.pipeline import answer
from query.retrieval.retrieve import Retriever
from query.retrieval.trace import Trace
from query.retrieval.usage import asks_usage
from query.types import QueryRequest
from tests.support import paths
from tests.support.navigation import ingest_into, keyword_engine


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    return ingest_into(tmp_path_factory.mktemp("usage"), paths.FIXTURES / "identifiers" / "app")


def calibrated(tmp_path: Path, store: Path, record: Calibration | None) -> Path:
    copy = tmp_path / "store"
    shutil.copytree(store, copy)
    if record is not None:
        index = SQLiteStore(copy).open_index("app", write=True)
        try:
            index.record_fusion_calibration(record.to_json())
        finally:
            index.close()
    return copy


def retriever(store: Path, question: str, fusion: str = "auto") -> Retriever:
    request = QueryRequest(query=question, indexes=["app"], fusion=fusion)  # type: ignore[arg-type]
    return Retriever(keyword_engine(store), request, ["app"], Trace())


CODE = Calibration("adaptive", 6, 0, prose_share=0.0, usage_floor=True)
PROSE = Calibration("adaptive", 6, 0, prose_share=1.0, usage_floor=False)


@pytest.mark.parametrize(
    "question",
    [
        "Who calls fetch_user?",
        "What uses the bridge when it reloads?",
        "What depends on the session store, and what breaks if it changes?",
        "Where is RCTBridge referenced?",
    ],
)
def test_questions_about_uses_ask_for_usage(question):
    assert asks_usage(question)


@pytest.mark.parametrize(
    "question", ["How do I use RCTBridge?", "Where is the user fetched?", "Using fetch_user"]
)
def test_questions_about_how_something_works_do_not(question):
    assert not asks_usage(question)


def test_a_usage_question_over_an_index_calibrated_as_code_takes_the_floor(tmp_path, store):
    copy = calibrated(tmp_path, store, CODE)
    assert retriever(copy, "Who calls fetch_user?").reading.asks_usage()
    assert retriever(copy, "Who calls fetch_user?", fusion="adaptive").reading.asks_usage()
    assert not retriever(copy, "How is the user fetched?").reading.asks_usage()


def test_an_index_calibrated_as_prose_or_never_calibrated_takes_no_usage_floor(tmp_path, store):
    assert not retriever(
        calibrated(tmp_path / "p", store, PROSE), "Who calls it?"
    ).reading.asks_usage()
    assert not retriever(
        calibrated(tmp_path / "n", store, None), "Who calls it?"
    ).reading.asks_usage()


def test_the_response_reports_the_usage_floor_and_its_weights(tmp_path, store):
    copy = calibrated(tmp_path, store, CODE)
    engine = keyword_engine(copy)
    response = answer(
        QueryRequest(query="Who calls fetch_user?", indexes=["app"], rerank=False), engine
    )
    assert response.fusion["usage_floor"] is True
    assert response.fusion["weights"] == pytest.approx({"vector": 0.2, "bm25": 0.8})


def test_a_usage_question_over_code_does_not_lift_the_declaration_of_what_it_names(tmp_path, store):
    copy = calibrated(tmp_path, store, CODE)
    assert retriever(copy, "Who calls fetch_user?").reading.definitions_boosted() == []
    assert retriever(copy, "How does fetch_user work?").reading.definitions_boosted() == [
        "fetch_user"
    ]
    assert retriever(store, "Who calls fetch_user?").reading.definitions_boosted() == ["fetch_user"]
