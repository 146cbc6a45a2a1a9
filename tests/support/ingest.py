"""Shared by the tests/test_ingest_*.py modules: a tiny corpus copied per test, settings that
keep every path inside the test's tmp_path, and a raw look at an index file that reads
everything in one read transaction (the view a query in another process would have)."""

from __future__ import annotations

import os
import shutil
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.settings import Settings
from core.store.sqlite.chunk_text import ChunkText
from flows.ingest_flow import run_ingest
from loaders.summary import IngestSummary
from loaders.target import IngestTarget
from tests.support.paths import FIXTURES

CORPUS = FIXTURES / "ingest" / "corpus"
INDEX = "ingest"
# Every section of every fixture file says which version it belongs to.
OLD, NEW = "Release alpha.", "Release beta."


def copy_corpus(tmp_path: Path) -> Path:
    target = tmp_path / "corpus"
    shutil.copytree(CORPUS, target)
    return target


def settings_for(tmp_path: Path) -> Settings:
    # Small chunks so each fixture file (three short sections) makes three chunks.
    return Settings(
        data_dir=tmp_path / "data",
        index_dir=tmp_path / "indexes",
        staging_dir=tmp_path / "staging",
        chunk_target_tokens=40,
        chunk_max_tokens=60,
        chunk_overlap_tokens=0,
    )


def store_dir(tmp_path: Path) -> Path:
    return tmp_path / "store"


def index_file(tmp_path: Path) -> Path:
    return store_dir(tmp_path) / f"{INDEX}.sqlite"


def ingest(tmp_path: Path, corpus: Path, **kwargs: Any) -> IngestSummary:
    return run_ingest(
        [str(corpus)],
        settings_for(tmp_path),
        IngestTarget(INDEX, str(store_dir(tmp_path))),
        **kwargs,
    )


def rewrite(path: Path, old: str, new: str) -> None:
    """Replace text and move the mtime forward, so the mtime fast path cannot miss it even
    on a file system with coarse timestamps."""
    before = path.stat().st_mtime
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new), encoding="utf-8")
    os.utime(path, (before + 10, before + 10))


@dataclass(frozen=True)
class IndexView:
    documents: dict[str, str]  # doc_id -> content_hash
    chunks: dict[str, list[tuple[int, str, str]]]  # doc_id -> [(rowid, chunk_id, content)]
    vectors: int
    fts_rows: int
    generation: int
    orphan_vectors: int = 0  # vectors whose chunk is gone

    @property
    def chunk_count(self) -> int:
        return sum(len(rows) for rows in self.chunks.values())

    def versions(self, doc_id: str) -> set[str]:
        """The versions ("old", "new", "none") the document's chunks carry."""
        found = set()
        for _, _, content in self.chunks.get(doc_id, []):
            found.add("old" if OLD in content else "new" if NEW in content else "none")
        return found


def view(path: Path) -> IndexView:
    """Everything in one read transaction, through a connection of its own."""
    conn = sqlite3.connect(path, isolation_level=None, timeout=10.0)
    try:
        conn.execute("BEGIN")
        documents = dict(conn.execute("SELECT doc_id, content_hash FROM documents"))
        chunks: dict[str, list[tuple[int, str, str]]] = {}
        text = ChunkText(str(path))
        for doc_id, rowid, chunk_id, content in conn.execute(
            "SELECT doc_id, id, chunk_id, content FROM chunks ORDER BY id"
        ):
            chunks.setdefault(doc_id, []).append((rowid, chunk_id, text.decode(conn, content)))
        vectors = conn.execute("SELECT count(*) FROM vectors").fetchone()[0]
        fts_rows = conn.execute("SELECT count(*) FROM chunks_fts").fetchone()[0]
        generation = conn.execute("SELECT generation FROM meta").fetchone()[0]
        orphans = conn.execute(
            "SELECT count(*) FROM vectors WHERE chunk_id NOT IN (SELECT chunk_id FROM chunks)"
        ).fetchone()[0]
        conn.execute("COMMIT")
    finally:
        conn.close()
    return IndexView(documents, chunks, vectors, fts_rows, generation, orphans)


def assert_consistent(snapshot: IndexView, old_hashes: dict[str, str]) -> dict[str, str]:
    """Every document is entirely old or entirely new, its row agrees with its chunks, rows
    and FTS entries match one to one, and every vector belongs to a chunk (a chunk may still
    wait for its vector: the ingest's vector phase comes after its load). Returns doc_id ->
    "old" | "new"."""
    assert snapshot.chunk_count == snapshot.fts_rows
    assert snapshot.vectors <= snapshot.chunk_count and snapshot.orphan_vectors == 0
    assert set(snapshot.chunks) <= set(snapshot.documents), "chunks of an unknown document"
    states = {}
    for doc_id, content_hash in snapshot.documents.items():
        versions = snapshot.versions(doc_id)
        assert len(versions) == 1, f"{doc_id} is half old, half new: {versions}"
        (version,) = versions
        recorded_old = content_hash == old_hashes.get(doc_id)
        assert (version == "old") == recorded_old, f"{doc_id}: row and chunks disagree"
        states[doc_id] = version
    return states
