"""Which words of a question are identifiers (query.retrieval.expansion.words,
`declared_identifiers`): a name the index declares, or one spelled as code. Asked of a small
real index (tests/fixtures/identifiers: an Objective-C header, a Python module, a JavaScript
class) and of one that also declares a Swift class named `JavaScript`."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

import pytest

from core.store.sqlite.store import SQLiteStore
from query.calibration.calibrate import Calibration
from query.retrieval.expansion.words import declared_identifiers
from query.retrieval.retrieve import Retriever
from query.retrieval.trace import Trace
from query.types import QueryRequest
from tests.support import paths
from tests.support.navigation import ingest_into, keyword_engine

FIXTURE = paths.FIXTURES / "identifiers"

PROSE = [
    "How does the app pass a JavaScript callback to Swift?",
    "Which SwiftUI views does the iOS target use?",
    "Does Swift code here run on iOS and in JavaScript?",
]


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("identifiers")
    ingest_into(base, FIXTURE / "app", index="app")
    return ingest_into(base, FIXTURE, index="products")  # app/ and products/JavaScript.swift


def names(store: Path, index: str, question: str) -> list[str]:
    opened = SQLiteStore(store).open_index(index)
    try:

        def declared(words: Sequence[str]) -> set[str]:
            return {str(r["name"]) for r in opened.definitions_named(list(words))}

        return declared_identifiers(question, declared)
    finally:
        opened.close()


@pytest.mark.parametrize("question", PROSE)
def test_product_names_in_prose_are_no_identifiers_where_nothing_declares_them(store, question):
    assert names(store, "app", question) == []


def test_declared_names_and_code_shaped_names_are_identifiers(store):
    question = "Where does RCTBridge call fetch_user, and what does Promise.resolve return?"
    assert names(store, "app", question) == ["RCTBridge", "fetch_user", "Promise.resolve"]


def test_a_camel_case_name_counts_only_in_the_index_that_declares_it(store):
    question = "How does RCTBridge talk to JavaScript?"
    assert names(store, "app", question) == ["RCTBridge"]
    assert names(store, "products", question) == ["RCTBridge", "JavaScript"]


def test_code_shape_alone_makes_an_identifier_whatever_the_index_declares(store):
    question = "What do std::move and load_config() do, and @MainActor?"
    assert names(store, "app", question) == ["std", "move", "load_config", "MainActor"]


def test_a_keyword_quoted_as_code_is_no_identifier(store):
    assert names(store, "app", "What is `some View` against `any View`?") == []


def test_abbreviations_with_dots_are_no_identifiers(store):
    assert names(store, "app", "Which callbacks, e.g. on reload, run on iOS?") == []


def retriever(store: Path, question: str, fusion: str = "auto") -> Retriever:
    engine = keyword_engine(store)
    request = QueryRequest(query=question, indexes=["app"], fusion=fusion)  # type: ignore[arg-type]
    return Retriever(engine, request, ["app"], Trace())


def test_the_identifier_floor_applies_to_a_declared_name_not_to_a_product_name(store):
    assert retriever(store, "How is RCTBridge reloaded?").reading.names_identifier()
    assert not retriever(
        store, "How does JavaScript reach Swift on iOS?"
    ).reading.names_identifier()


def test_a_calibration_that_switched_the_floor_off_keeps_it_off_under_auto(tmp_path, store):
    copy = tmp_path / "store"
    shutil.copytree(store, copy)
    index = SQLiteStore(copy).open_index("app", write=True)
    try:
        index.record_fusion_calibration(Calibration("adaptive", 6, 0, floor=False).to_json())
    finally:
        index.close()
    assert not retriever(copy, "How is RCTBridge reloaded?").reading.names_identifier()
    assert retriever(
        copy, "How is RCTBridge reloaded?", fusion="adaptive"
    ).reading.names_identifier()
