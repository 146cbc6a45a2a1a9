"""Answers while an index's vectors fill in: keyword search covers every chunk, vector search
the chunks that have a vector, and the answer, `status`, the MCP `index_status` and the
worker say how much of the index has vectors and what embeds the rest."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client

from core.embedding.models import canonical_model_id, model_spec
from core.settings import Settings
from core.store.modes import LONG_LIVED
from core.store.sqlite.store import SQLiteStore
from query.cli.main import main
from query.errors import is_degraded
from query.mcp.server import build_server
from query.retrieval.engine import Engine
from query.retrieval.pipeline import answer
from query.types import QueryRequest
from tests.support.embedders import HashEmbedder
from tests.support.query import WordCounter, no_expansion, worker_serving
from tests.support.store_contract import batch_of, fixture_chunks

EMBEDDED_DOCS = ("doc-nav", "doc-net")  # 3 of the fixture's 5 chunks; doc-py, doc-web wait
CALL_TIMEOUT_S = 120.0


def half_embedded(root: Path) -> Path:
    """Index `docs`: the chunks of EMBEDDED_DOCS with their vectors, the others without."""
    chunks = fixture_chunks()
    embedded = [c for c in chunks if c.doc_id in EMBEDDED_DOCS]
    index = SQLiteStore(root).open_index("docs", create=True)
    index.bind_model(HashEmbedder.model_id, HashEmbedder.dim)
    texts = [c.content for c in embedded]
    index.apply(batch_of(embedded, vectors=HashEmbedder().embed_documents(texts)))
    index.apply(batch_of([c for c in chunks if c not in embedded], without_vectors=True))
    index.close()
    return root


def unembedded(root: Path) -> Path:
    """Index `docs` as `ingest --vectors later` leaves it: bound to the default model, every
    chunk loaded, no vector yet."""
    model = canonical_model_id(Settings().embedding_model)
    index = SQLiteStore(root).open_index("docs", create=True)
    index.bind_model(model, model_spec(model).dim)
    index.apply(batch_of(fixture_chunks(), without_vectors=True))
    index.close()
    return root


def hash_engine(store: Path) -> Engine:
    return Engine(
        Settings(),
        SQLiteStore(store),
        embedder=HashEmbedder(),
        reranker=None,
        llm=None,
        counter=WordCounter(),
        expander=no_expansion,
    )


def ask(engine: Engine, query: str, **fields: Any) -> dict[str, Any]:
    return answer(QueryRequest(query=query, rerank=False, **fields), engine).to_dict()


# The answer's notes


def test_a_question_says_how_much_of_the_index_its_vectors_cover(tmp_path):
    result = ask(hash_engine(half_embedded(tmp_path)), "NavigationStack views")
    assert (
        "vectors cover 60% of index 'docs' (embedding in progress: 2 of 5 chunks wait; "
        "keyword results complete)"
    ) in result["notes"]
    assert not is_degraded(result)


def test_a_chunk_without_a_vector_is_found_by_keyword(tmp_path):
    result = ask(hash_engine(half_embedded(tmp_path)), "parse_config_file")
    found = {c["chunk_id"]: c["ranks"] for c in result["chunks"]}
    assert found["py-1"]["bm25"] == 1 and found["py-1"]["vector"] is None


def test_a_vector_only_question_says_the_chunks_without_a_vector_are_not_searched(tmp_path):
    result = ask(hash_engine(half_embedded(tmp_path)), "parse_config_file", mode="vector")
    assert any(
        n.startswith("vectors cover 60% of index 'docs'")
        and n.endswith("the chunks without one are not searched)")
        for n in result["notes"]
    )
    assert "py-1" not in {c["chunk_id"] for c in result["chunks"]}


def test_an_index_with_no_vectors_yet_says_they_are_pending_and_what_embeds_them(tmp_path):
    result = ask(hash_engine(unembedded(tmp_path)), "NavigationStack views")
    (note,) = [n for n in result["notes"] if "vector search skipped on index 'docs'" in n]
    assert "its vectors are pending (none of its 5 chunks is embedded yet" in note
    assert "`rag-retrieve embed --index docs`" in note
    assert result["chunks"][0]["chunk_id"] in ("nav-1", "nav-2")


# With the default settings, everywhere a question is asked


def test_the_cli_answers_an_unembedded_index_by_keyword_with_the_default_settings(tmp_path, capsys):
    store = unembedded(tmp_path)
    assert main(["parse_config_file", "--store", str(store), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert [c["chunk_id"] for c in result["chunks"]][:1] == ["py-1"]
    assert any("its vectors are pending" in n for n in result["notes"])


def test_the_warm_worker_answers_an_unembedded_index_by_keyword(tmp_path):
    engine = Engine.open(Settings(), str(unembedded(tmp_path)), modes=LONG_LIVED)
    engine.warm()  # as `python -m query serve` does: the query model loaded, unused here
    try:
        with worker_serving(engine) as url:
            reply = httpx.post(f"{url}/retrieve", json={"query": "parse_config_file"}, timeout=60)
    finally:
        engine.close()
    assert reply.status_code == 200
    assert reply.json()["chunks"][0]["chunk_id"] == "py-1"


def test_mcp_answers_an_unembedded_index_by_keyword_and_reports_its_coverage(tmp_path):
    engine = Engine.open(Settings(), str(unembedded(tmp_path)), modes=LONG_LIVED)
    server = build_server(engine, threads=2, log=lambda _line: None)

    async def go() -> tuple[Any, Any]:
        with anyio.fail_after(CALL_TIMEOUT_S):
            async with Client(server) as client:
                found = await client.call_tool("retrieve", {"query": "parse_config_file"})
                status = await client.call_tool("index_status", {"index": "docs"})
        return found.structured_content, status.structured_content

    try:
        found, status = anyio.run(go)
    finally:
        engine.close()
    assert found["chunks"][0]["chunk_id"] == "py-1"
    docs = status["indexes"]["docs"]
    assert (docs["vector_coverage"], docs["chunks_pending"]) == (0.0, 5)


# `status`


def test_status_json_reports_the_coverage_and_the_chunks_pending(tmp_path, capsys):
    store = half_embedded(tmp_path)
    assert main(["status", "--store", str(store), "--json"]) == 0
    docs = json.loads(capsys.readouterr().out)["indexes"]["docs"]
    assert (docs["vector_coverage"], docs["chunks_pending"]) == (0.6, 2)


def test_status_shows_a_progress_line_with_the_command_that_embeds_the_rest(tmp_path, capsys):
    store = half_embedded(tmp_path)
    assert main(["status", "--store", str(store)]) == 0
    out = capsys.readouterr().out
    assert "  vectors: 60% (2 of 5 chunks wait; `rag-retrieve embed --index docs`)" in out
    assert "vector_coverage" not in out and "chunks_pending" not in out


@pytest.mark.parametrize(
    ("pending", "chunks", "shown"),
    [(7090, 11258, "37%"), (1, 20000, "99%"), (999, 1000, "under 1%")],
)
def test_the_percentage_is_rounded_down_so_it_says_100_only_when_nothing_waits(
    pending, chunks, shown
):
    from core.store.coverage import percent

    assert percent(pending, chunks) == shown
