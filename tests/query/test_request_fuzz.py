"""Any request body becomes a request or a usage error naming the field, never another
exception: the request model fuzzed with arbitrary JSON objects and near-valid fields."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from query.errors import UsageError
from query.retrieval.pipeline import REQUEST_FIELDS, make_request
from query.types import QueryRequest

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=10,
)
bodies = st.dictionaries(
    st.sampled_from(sorted(REQUEST_FIELDS)) | st.text(max_size=8), json_values, max_size=10
)


@pytest.mark.slow  # 500 fuzzed bodies
@settings(max_examples=500, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(bodies)
def test_any_body_is_a_request_or_a_usage_error(body: dict[str, Any]):
    try:
        request = make_request(body)
    except UsageError as exc:
        assert str(exc)
    else:
        assert isinstance(request, QueryRequest)


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=1, max_size=300).filter(str.strip), json_values)
def test_a_query_with_any_ios_version_is_a_request_or_a_usage_error(query: str, version: Any):
    try:
        make_request({"query": query, "ios_version": version})
    except UsageError as exc:
        assert "ios_version" in str(exc)
