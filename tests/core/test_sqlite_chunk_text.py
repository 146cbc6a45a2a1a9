"""Chunk text at rest in an embedded index: zstd frames with a dictionary trained on the
index's chunks, read back exactly by any handle on the file."""

from __future__ import annotations

from pathlib import Path

import pytest
import zstandard

from chunkers.model import Chunk
from core.store.contract import StoreError
from core.store.filters import SearchFilter
from core.store.sqlite import chunk_text
from core.store.sqlite.store import SQLiteStore
from tests.support import sqlite_files
from tests.support.sqlite_files import raw
from tests.support.store_contract import DIM, MODEL, batch_of, ids, make_chunk

store = sqlite_files.store  # the shared fixture, by name

FIXTURES = Path(__file__).parents[1] / "fixtures"
TEXT_SUFFIXES = {".md", ".txt", ".swift", ".py", ".ts", ".m", ".h", ".kt", ".go", ".rs", ".java"}


def fixture_texts() -> list[str]:
    """25-line windows of the code and prose fixtures: text with the repetition of real
    chunks (shared identifiers, keywords, boilerplate)."""
    texts = []
    for path in sorted(FIXTURES.rglob("*")):
        if path.is_file() and path.suffix in TEXT_SUFFIXES:
            lines = path.read_text(errors="replace").splitlines()
            for start in range(0, len(lines), 25):
                text = "\n".join(lines[start : start + 25])
                if len(text) > 200:
                    texts.append(text)
    return texts


def corpus(prefix: str = "c") -> list[Chunk]:
    return [
        make_chunk(f"{prefix}{i}", f"{prefix}doc{i // 10}", chunk_index=i % 10, content=text)
        for i, text in enumerate(fixture_texts())
    ]


@pytest.fixture
def small_training(monkeypatch: pytest.MonkeyPatch) -> None:
    """Train from the fixtures' ~70 KB of text instead of the production minimum of 1 MB."""
    monkeypatch.setattr(chunk_text, "TRAIN_MIN_BYTES", 32_000)


@pytest.fixture
def index(store: SQLiteStore):
    opened = store.open_index("texts", create=True)
    opened.bind_model(MODEL, DIM)
    yield opened
    opened.close()


def texts_through_another_handle(store: SQLiteStore, chunks: list[Chunk]) -> dict[str, str]:
    """The chunks' text as a second handle on the file reads it (another process would)."""
    other = SQLiteStore(store.directory).open_index("texts")
    try:
        fetched = other.fetch([c.chunk_id for c in chunks])
    finally:
        other.close()
    return {chunk_id: row["content"] for chunk_id, row in fetched.items()}


def test_a_batch_with_enough_text_is_stored_compressed_with_one_trained_dictionary(
    index, small_training
):
    chunks = corpus()
    index.apply(batch_of(chunks))
    with raw(index) as conn:
        assert conn.execute("SELECT count(*) FROM text_dictionaries").fetchone()[0] == 1
        kinds = dict(conn.execute("SELECT typeof(content), count(*) FROM chunks GROUP BY 1"))
        stored = conn.execute("SELECT sum(length(CAST(content AS BLOB))) FROM chunks").fetchone()
    assert kinds == {"blob": len(chunks)}
    assert stored[0] < sum(len(c.content.encode()) for c in chunks) / 2


def test_every_text_reads_back_exactly_through_another_handle(index, store, small_training):
    chunks = corpus()
    index.apply(batch_of(chunks))
    assert texts_through_another_handle(store, chunks) == {c.chunk_id: c.content for c in chunks}


def test_a_small_index_is_compressed_without_a_dictionary(index):
    chunks = corpus()[:5]
    index.apply(batch_of(chunks))
    with raw(index) as conn:
        assert conn.execute("SELECT count(*) FROM text_dictionaries").fetchone()[0] == 0
        frames = [row[0] for row in conn.execute("SELECT content FROM chunks")]
    assert all(zstandard.get_frame_parameters(f).dict_id == 0 for f in frames)
    assert {v["content"] for v in index.fetch([c.chunk_id for c in chunks]).values()} == {
        c.content for c in chunks
    }


def test_a_text_too_short_to_shrink_is_stored_as_text(index):
    index.apply(batch_of([make_chunk("short", "d", content="ok: ü")]))
    with raw(index) as conn:
        assert conn.execute("SELECT typeof(content), content FROM chunks").fetchone() == (
            "text",
            "ok: ü",
        )


def test_a_dictionary_trained_in_a_rolled_back_write_is_never_used(index, store, small_training):
    chunks = corpus()
    # The same chunk id twice: the insert fails after the dictionary was trained and stored.
    with pytest.raises(StoreError):
        index.apply(batch_of(chunks + [make_chunk(chunks[0].chunk_id, chunks[0].doc_id)]))
    index.apply(batch_of(chunks))
    with raw(index) as conn:
        assert conn.execute("SELECT count(*) FROM text_dictionaries").fetchone()[0] == 1
    assert texts_through_another_handle(store, chunks) == {c.chunk_id: c.content for c in chunks}


def test_keyword_search_over_compressed_text_scores_as_fts5(index, small_training):
    index.apply(batch_of(corpus()))
    postings = index.keywords()
    for query in ("refresh token", "struct init", "cache"):
        expected = index.fts_bm25_search(query, SearchFilter(), 10)
        found = postings.search(query.split(), SearchFilter(), 10)
        assert ids(found) == ids(expected)
        assert [h.score for h in found] == pytest.approx([h.score for h in expected], abs=1e-6)


def test_replacing_a_compressed_document_removes_its_old_words(index, small_training):
    chunks = corpus()
    index.apply(batch_of(chunks))
    target = chunks[0]
    replaced = make_chunk(target.chunk_id, target.doc_id, content="quokkaquill " * 40)
    index.apply(batch_of([replaced], doc_hash="v2"))
    assert ids(index.fts_bm25_search("quokkaquill", SearchFilter(), 5)) == [target.chunk_id]
    old_word = next(w for w in target.content.split() if w.isalpha() and len(w) > 6)
    assert target.chunk_id not in ids(index.fts_bm25_search(old_word, SearchFilter(), 100))


def test_text_naming_a_dictionary_the_file_lacks_is_reported_as_damage(index, small_training):
    index.apply(batch_of(corpus()))
    alien = zstandard.train_dictionary(4096, [t.encode() for t in fixture_texts()])
    frame = zstandard.ZstdCompressor(dict_data=alien, write_dict_id=True).compress(b"x" * 500)
    with raw(index) as conn:
        conn.execute("UPDATE chunks SET content = ? WHERE chunk_id = 'c0'", (frame,))
    with pytest.raises(StoreError, match="damaged") as err:
        index.fetch(["c0"])
    assert str(index.path) in str(err.value)
