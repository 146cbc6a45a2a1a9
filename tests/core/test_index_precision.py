"""An index records the precision its vectors were embedded in, shows it in its status, and
takes vectors of another precision only when every precision involved held the model's
quality guard (the caller says which may share: core/embedding/precision.py)."""

from __future__ import annotations

import pytest

from core.embedding.precision import precision_label
from core.store.contract import ModelMismatch, precisions_of
from query.cli.status import render_status
from query.retrieval.plan import vector_problem
from tests.support import sqlite_files
from tests.support.fake_runtime import FakeEmbedder
from tests.support.sqlite_files import raw

store = sqlite_files.store  # the shared fixture, by name

GUARDED = frozenset({"fp32", "int8"})  # what shares_index_with gives a guarded int8


def test_a_new_index_records_the_precision_it_was_built_with(store):
    index = store.open_index("docs", create=True)
    assert index.embedding_precision is None
    index.bind_model("org/model", 4, "int8", shares_with={"int8"})
    assert index.embedding_precision == "int8"
    assert index.stats()["embedding_precision"] == "int8"


def test_query_status_shows_the_precision_next_to_the_model(store):
    index = store.open_index("docs", create=True)
    index.bind_model("org/model", 4)
    text = render_status({"store": "s", "indexes": {"docs": index.stats()}})
    lines = text.splitlines()
    model_line = lines.index("  model_id: org/model")
    assert lines[model_line + 2] == "  embedding_precision: fp32"


def test_an_index_from_before_precisions_were_recorded_is_fp32(store):
    index = store.open_index("docs", create=True)
    index.bind_model("org/model", 4)
    with raw(index) as conn:
        conn.execute("UPDATE meta SET embedding_precision = NULL")
    assert index.embedding_precision == "fp32"
    assert precisions_of(None) == ("fp32",)


@pytest.mark.parametrize(("built", "joining"), [("fp32", "int8"), ("int8", "fp32")])
def test_precisions_that_did_not_hold_the_guard_are_refused(store, built, joining):
    index = store.open_index("docs", create=True)
    index.bind_model("org/model", 4, built, shares_with={built})
    with pytest.raises(ModelMismatch, match="quality guard"):
        index.bind_model("org/model", 4, joining, shares_with={joining})
    assert index.embedding_precision == built


def test_a_guarded_precision_joins_an_fp32_index_and_the_record_names_both(store):
    index = store.open_index("docs", create=True)
    index.bind_model("org/model", 4, "fp32", shares_with=GUARDED)
    index.bind_model("org/model", 4, "int8", shares_with=GUARDED)
    assert index.embedding_precision == "fp32+int8"
    # Once mixed, a precision outside the guarded family is refused as well.
    with pytest.raises(ModelMismatch, match="fp32\\+int8"):
        index.bind_model("org/model", 4, "bf16", shares_with={"bf16"})


def test_a_query_embedder_in_an_unguarded_precision_does_not_search_the_vectors():
    int8 = FakeEmbedder()
    int8.precision = "int8"
    stats = {"vectors": 3, "embedding_precision": "fp32"}
    problem = vector_problem(int8, "fake/model", 8, stats)
    assert "quality guard" in problem and "RAG_EMBEDDING_PRECISION=fp32" in problem
    assert vector_problem(FakeEmbedder(), "fake/model", 8, stats) == ""
    same = {**stats, "embedding_precision": precision_label("int8")}
    assert vector_problem(int8, "fake/model", 8, same) == ""
    # int8 vectors of another quantization are other vectors.
    other = {**stats, "embedding_precision": "int8:an-older-policy"}
    assert "quality guard" in vector_problem(int8, "fake/model", 8, other)
