"""The worker's HTTP API fuzzed from its own OpenAPI document (schemathesis) against a live
worker on the real store: no generated request gets a 5xx, whatever its fields hold."""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings

from tests.support.query import build_stores, shared_engine, worker_serving

pytestmark = pytest.mark.slow

# Bounded: a fixed number of examples per route and no per-example deadline (a retrieval on
# a loaded 2-core box takes a while); the whole run takes seconds to a minute.
EXAMPLES = 40


@pytest.fixture(scope="module")
def worker_url(tmp_path_factory):
    engine = shared_engine(build_stores(tmp_path_factory.getbasetemp() / "query-stores"))
    with worker_serving(engine) as served:
        yield served


def operations(url: str):
    # The document as served: what a client (or an attacker) reads.
    api = schemathesis.openapi.from_url(f"{url}/openapi.json")
    return [result.ok() for result in api.get_all_operations()]


def test_the_openapi_document_declares_every_route(worker_url):
    labels = {operation.label for operation in operations(worker_url)}
    assert labels == {"GET /live", "GET /health", "POST /retrieve"}


def test_no_generated_request_gets_a_server_error(worker_url):
    for operation in operations(worker_url):

        @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
        @given(case=operation.as_strategy())
        def no_server_error(case) -> None:
            response = case.call(base_url=worker_url, timeout=60)
            assert response.status_code < 500, (
                case.operation.label,
                case.body,
                response.text[:500],
            )

        no_server_error()
