"""The references table as every store keeps it (core.store.contract.REFERENCE_SCHEMA): part of
the contract suite, pulled into a backend's test module with
`from tests.support.store_contract_references import *`. Written with the chunks, replaced and
deleted with their document, read by name and by path."""

from __future__ import annotations

import pytest

from chunkers.code.references import DEFINITION, Reference
from core.store.contract import StoreError
from tests.support.store_contract import batch_of, make_chunk


def code_chunk(chunk_id: str, doc_id: str, path: str, refs: list[Reference]):
    return make_chunk(
        chunk_id,
        doc_id,
        language="swift",
        source="user_codebase",
        chunk_type="user_code",
        path=path,
        start_line=1,
        end_line=20,
        references=refs,
    )


DRAW = Reference("draw", DEFINITION, 3, 5, "function", "Shape")
CALL = Reference("draw", "call", 7, 7, "", "Canvas.paint", "shape")


def test_references_are_read_by_name_with_their_chunks_path(index):
    index.apply(batch_of([code_chunk("c1", "d1", "Shape.swift", [DRAW])]))
    index.apply(batch_of([code_chunk("c2", "d2", "Canvas.swift", [CALL])]))
    rows = index.references_named(["draw"])
    assert [(r["path"], r["role"], r["line"], r["scope"]) for r in rows] == [
        ("Canvas.swift", "call", 7, "Canvas.paint"),
        ("Shape.swift", DEFINITION, 3, "Shape"),
    ]
    assert rows[0]["qualifier"] == "shape" and rows[1]["kind"] == "function"


def test_references_are_read_by_path(index):
    index.apply(batch_of([code_chunk("c1", "d1", "Shape.swift", [DRAW, CALL])]))
    assert [r["role"] for r in index.references_in("Shape.swift")] == [DEFINITION, "call"]
    assert index.references_in("Other.swift") == []


def test_the_imports_of_many_documents_are_read_at_once(index):
    shapes = Reference("Shapes", "import", 1, 1)
    index.apply(batch_of([code_chunk("c1", "d1", "Canvas.swift", [shapes, CALL])]))
    index.apply(batch_of([code_chunk("c2", "d2", "Shape.swift", [DRAW])]))
    assert index.imports_of(["d1", "d2", "d9"]) == {"d1": ["Shapes"]}


def test_the_calls_inside_a_declaration_are_read_by_its_document_and_name(index):
    member = Reference("draw", "member", 8, 8, "", "Canvas.paint", "shape")
    elsewhere = Reference("draw", "call", 9, 9, "", "Canvas.clear", "")
    index.apply(batch_of([code_chunk("c2", "d2", "Canvas.swift", [CALL, member, elsewhere])]))
    rows = index.calls_in([("d2", "Canvas.paint"), ("d9", "Canvas.clear")])
    assert [(r["path"], r["line"], r["role"]) for r in rows] == [("Canvas.swift", 7, "call")]


def test_definitions_are_read_by_name_without_their_uses(index):
    index.apply(batch_of([code_chunk("c1", "d1", "Shape.swift", [DRAW])]))
    index.apply(batch_of([code_chunk("c2", "d2", "Canvas.swift", [CALL])]))
    rows = index.definitions_named(["draw", "paint"])
    assert [(r["path"], r["role"], r["line"]) for r in rows] == [("Shape.swift", DEFINITION, 3)]


def test_rewriting_a_document_replaces_its_references(index):
    index.apply(batch_of([code_chunk("c1", "d1", "Shape.swift", [DRAW, CALL])]))
    index.apply(batch_of([code_chunk("c1b", "d1", "Shape.swift", [DRAW])], doc_hash="v2"))
    assert [r["role"] for r in index.references_named(["draw"])] == [DEFINITION]


def test_deleting_a_document_deletes_its_references(index):
    index.apply(batch_of([code_chunk("c1", "d1", "Shape.swift", [DRAW])]))
    index.apply(batch_of([code_chunk("c2", "d2", "Canvas.swift", [CALL])]))
    index.apply(batch_of([], delete=("d1",)))
    assert [r["path"] for r in index.references_named(["draw"])] == ["Canvas.swift"]


def test_a_reference_of_a_chunk_outside_the_batch_fails_the_batch(index):
    batch = batch_of([code_chunk("c1", "d1", "Shape.swift", [DRAW])])
    stray = batch_of([code_chunk("elsewhere", "d1", "Shape.swift", [CALL])])
    batch.references = stray.references
    with pytest.raises(StoreError, match="elsewhere"):
        index.apply(batch)
    assert index.references_named(["draw"]) == []


def page_chunk(chunk_id: str, doc_id: str, url: str, refs: list[Reference], index: int = 0):
    return make_chunk(
        chunk_id, doc_id, source="package_docs", url=url, chunk_index=index, references=refs
    )


def test_a_pages_link_leads_to_its_targets_first_chunk_by_url(index):
    link = Reference("/documentation/demo/widget", "link", 1, 1, "parent", "", "Widget")
    index.apply(batch_of([page_chunk("s1", "spin", "/documentation/demo/spin", [link])]))
    index.apply(
        batch_of(
            [
                page_chunk("w1", "widget", "/documentation/demo/widget", []),
                page_chunk("w2", "widget", "/documentation/demo/widget", [], index=1),
            ]
        )
    )
    assert index.document_links() == [("s1", "spin", "parent", "Widget", "w1")]


def test_a_link_to_a_page_not_in_the_index_leads_nowhere(index):
    link = Reference("/documentation/elsewhere", "link", 1, 1, "topic", "", "Elsewhere")
    index.apply(batch_of([page_chunk("s1", "spin", "/documentation/demo/spin", [link])]))
    assert index.document_links() == []
