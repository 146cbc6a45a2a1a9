"""The links a DocC archive's pages state, followed at query time: a symbol page leads to the
type it belongs to, a link place says which page named it, and the result says where the page
opens."""

from __future__ import annotations

import pytest

from query.retrieval.pipeline import answer, make_request
from tests.support.navigation import ingest_into, keyword_engine
from tests.support.paths import FIXTURES

ARCHIVE = FIXTURES / "published" / "Demo.doccarchive"


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return ingest_into(tmp_path_factory.mktemp("pages"), ARCHIVE)


def ask(store, query: str, top_k: int = 2) -> list[dict]:
    served = keyword_engine(store)
    try:
        request = make_request({"query": query, "mode": "bm25", "rerank": False, "top_k": top_k})
        return answer(request, served).chunks
    finally:
        served.close()


def test_every_link_between_the_archives_pages_resolves(store):
    served = keyword_engine(store)
    try:
        links = served.links("app")
        with served.checkout("app") as index:
            stated = index.document_links()
    finally:
        served.close()
    assert len(stated) == 10  # every topic reference of the 4 pages to another
    assert all(links.page_links(row.chunk_id) for row in stated)


def test_a_symbol_pages_link_place_is_the_type_it_belongs_to(store):
    # Only the method's parameter says "full": its chunk names no page, its page's parents
    # are its module and its type.
    chunks = ask(store, "how many full", top_k=3)
    assert chunks[0]["title"] == "spin(times:)"
    linked = {c["title"]: c["linked_from"] for c in chunks if c["linked_from"]}
    assert linked["Widget"]["name"] == "Widget"


def test_a_result_carries_its_document_id_title_and_url(store):
    top = ask(store, "how many full")[0]
    assert top["doc_id"] == "package_docs:data/documentation/demo/widget/spin(times:).json"
    assert top["url"] == "/documentation/demo/widget/spin(times:)"
