"""Incremental re-runs end to end: real files, the packaged MiniLM, a real SQLite index.

Plain `run_ingest`: the Prefect flow wrapper only adds the artifact and the CLI (tested in
test_ingest_cli.py)."""

from __future__ import annotations

from pathlib import Path

from core.embedding.cache import EmbeddingCache
from core.store.filters import SearchFilter
from core.store.sqlite.store import SQLiteStore
from flows.ingest_flow import run_ingest
from loaders.target import IngestTarget
from tests.support.ingest import (
    INDEX,
    copy_corpus,
    index_file,
    ingest,
    rewrite,
    settings_for,
    store_dir,
    view,
)
from tests.support.paths import FIXTURES

TRANSCRIPT = FIXTURES / "ingest" / "transcript"


def test_unchanged_rerun_embeds_nothing_and_writes_nothing(tmp_path: Path):
    corpus = copy_corpus(tmp_path)
    first = ingest(tmp_path, corpus)
    before = view(index_file(tmp_path))
    assert (first.docs_new, first.chunks_written) == (4, before.chunk_count)

    again = ingest(tmp_path, corpus)

    assert (again.docs_seen, again.docs_unchanged) == (4, 4)
    assert again.docs_new == again.docs_changed == again.docs_deleted == 0
    assert again.chunks_embedded == again.embedding_cache_hits == 0
    assert again.chunks_written == again.chunks_deleted == 0
    # Not even an empty transaction: every write bumps the generation.
    assert view(index_file(tmp_path)) == before


def test_edited_file_reembeds_only_its_changed_chunk(tmp_path: Path):
    corpus = copy_corpus(tmp_path)
    ingest(tmp_path, corpus)
    before = view(index_file(tmp_path))
    tides = "user_codebase:tides.md"
    rewrite(corpus / "tides.md", "never rely on the printed time", "always carry a tide clock")

    summary = ingest(tmp_path, corpus)

    assert (summary.docs_changed, summary.docs_unchanged) == (1, 3)
    # Three chunks replaced; two have the same text as before (cache), one is new.
    assert (summary.chunks_deleted, summary.chunks_written) == (3, 3)
    assert (summary.chunks_embedded, summary.embedding_cache_hits) == (1, 2)
    after = view(index_file(tmp_path))
    for doc_id, rows in before.chunks.items():
        if doc_id != tides:
            assert after.chunks[doc_id] == rows, f"{doc_id} was rewritten"
    with SQLiteStore(store_dir(tmp_path)).open_index(INDEX) as index:
        hits = index.bm25_search("tide clock", SearchFilter(), 3)
        assert index.fetch([hits[0].chunk_id])[hits[0].chunk_id]["doc_id"] == tides


def test_deleted_file_has_its_chunks_pruned(tmp_path: Path):
    corpus = copy_corpus(tmp_path)
    ingest(tmp_path, corpus)
    before = view(index_file(tmp_path))
    (corpus / "beekeeping.md").unlink()

    summary = ingest(tmp_path, corpus)

    assert (summary.docs_deleted, summary.docs_unchanged, summary.chunks_deleted) == (1, 3, 3)
    assert summary.chunks_written == summary.chunks_embedded == 0
    after = view(index_file(tmp_path))
    assert "user_codebase:beekeeping.md" not in after.documents
    assert "user_codebase:beekeeping.md" not in after.chunks
    assert after.vectors == after.fts_rows == after.chunk_count == before.chunk_count - 3
    with SQLiteStore(store_dir(tmp_path)).open_index(INDEX) as index:
        # Words only the deleted file had are gone from the FTS index too.
        assert index.bm25_search("swarming queen", SearchFilter(), 5) == []


def test_a_transcript_is_cut_without_embedding_anything_but_its_chunks(tmp_path: Path):
    talk = str(TRANSCRIPT / "talk.jsonl")
    settings = settings_for(tmp_path)
    first = run_ingest([talk], settings, IngestTarget(index="a", store=str(store_dir(tmp_path))))
    with EmbeddingCache(settings.embedding_cache_file) as cache:
        # Topic segmentation reads words, not vectors: the cache holds the chunks alone.
        assert cache.count() == first.chunks_embedded > 0

    # A rebuild elsewhere cuts the transcript the same way: nothing new to embed.
    second = run_ingest([talk], settings, IngestTarget(index="b", store=str(store_dir(tmp_path))))
    assert second.chunks_embedded == 0
    a, b = (view(store_dir(tmp_path) / f"{name}.sqlite") for name in "ab")
    assert [c[1:] for rows in a.chunks.values() for c in rows] == [
        c[1:] for rows in b.chunks.values() for c in rows
    ]


def test_the_embedding_cache_is_not_listed_as_an_index_of_the_default_store(tmp_path: Path):
    # `make run` ingests into the default store, which is also where the cache lives.
    settings = settings_for(tmp_path)
    target = IngestTarget(INDEX, str(settings.index_dir))
    run_ingest([str(copy_corpus(tmp_path))], settings, target)
    assert settings.embedding_cache_file.is_file()
    assert SQLiteStore(settings.index_dir).list_indexes() == [INDEX]
