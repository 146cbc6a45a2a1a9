"""Any JSONL line becomes a document or a reject naming its line, never an exception: the
record parser fuzzed with arbitrary bytes, arbitrary JSON and near-valid records."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chunkers.model import Document, Reject
from chunkers.sources.reading import Defaults, parse_record

DEFAULTS = Defaults(max_document_bytes=100_000)
FIELDS = (
    "text",
    "content",
    "title",
    "source",
    "domain",
    "language",
    "ios_version_min",
    "ios_version_max",
    "deprecated",
    "frameworks",
    "messages",
    "updated",
    "id",
    "url",
)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)
records = st.dictionaries(st.sampled_from(FIELDS) | st.text(max_size=8), json_values, max_size=8)


def parsed(line: bytes) -> Document | Reject:
    item = parse_record(line, "corpus.jsonl", 7, DEFAULTS, None)
    assert isinstance(item, Document | Reject)
    if isinstance(item, Reject):
        assert item.line == 7 and item.reason
    return item


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.binary(max_size=400))
def test_arbitrary_bytes_are_a_document_or_a_reject(line: bytes):
    parsed(line)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(json_values)
def test_arbitrary_json_is_a_document_or_a_reject(value: Any):
    parsed(json.dumps(value).encode())


@pytest.mark.slow  # 400 fuzzed records
@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(records)
def test_near_valid_records_are_a_document_or_a_reject(record: dict[str, Any]):
    parsed(json.dumps(record).encode())


@given(st.text(min_size=1, max_size=200).filter(str.strip))
def test_a_record_with_text_is_a_document(text: str):
    assert isinstance(parsed(json.dumps({"text": text}).encode()), Document)


def test_a_deeply_nested_line_under_the_size_limit_is_a_reject():
    # 80,000 bytes: within the record size limit, beyond the JSON decoder's recursion.
    item = parsed(b"[" * 40_000 + b"]" * 40_000)
    assert isinstance(item, Reject) and "nested too deeply" in item.reason
