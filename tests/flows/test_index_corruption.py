"""A page overwritten in the middle of an index file: the ingest refuses to write into it
(exit 1, the file byte for byte as it was), `query status` reports it and exits 1, and a
query names the damaged index and what to do."""

from __future__ import annotations

import hashlib
import json
import random
import struct
from pathlib import Path

import pytest

from core.store.sqlite.store import SQLiteStore
from flows.ingest import main as ingest_main
from query.cli.main import main as query_main
from tests.support.ingest import INDEX, copy_corpus, index_file, ingest, store_dir

pytestmark = pytest.mark.slow

BTREE_PAGE_TYPES = (0x02, 0x05, 0x0A, 0x0D)  # interior/leaf, index/table


def corrupt_middle_page(path: Path) -> int:
    """Overwrite the middle b-tree page of an SQLite file with random bytes; its number."""
    data = bytearray(path.read_bytes())
    (size,) = struct.unpack(">H", data[16:18])
    size = 65536 if size == 1 else size
    pages = [n for n in range(2, len(data) // size + 1) if data[(n - 1) * size] in BTREE_PAGE_TYPES]
    page = pages[len(pages) // 2]
    noise = random.Random(page).randbytes(size)
    data[(page - 1) * size : page * size] = noise
    path.write_bytes(bytes(data))
    return page


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def damaged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    corpus = copy_corpus(tmp_path)
    ingest(tmp_path, corpus)
    corrupt_middle_page(index_file(tmp_path))
    for name, sub in (("RAG_DATA_DIR", "data"), ("RAG_STAGING_DIR", "staging")):
        monkeypatch.setenv(name, str(tmp_path / sub))
    monkeypatch.setenv("RAG_INDEX_DIR", str(store_dir(tmp_path)))
    return corpus, index_file(tmp_path)


def test_the_store_check_finds_the_damaged_page(damaged):
    _, path = damaged
    assert SQLiteStore(path.parent).check_index(INDEX) != []


def test_ingest_refuses_to_write_into_a_damaged_index(damaged, capsys):
    corpus, path = damaged
    (corpus / "new-note.md").write_text("# A new note\n\nWritten after the damage.\n")
    before = digest(path)

    code = ingest_main([str(corpus), "--store", str(path.parent), "--index", INDEX])

    err = capsys.readouterr().err
    assert code == 1
    assert f"index '{INDEX}'" in err and "is damaged" in err and "nothing was written" in err
    assert digest(path) == before
    # No other file: the read-only check may leave only SQLite's own -wal/-shm beside it.
    left = {p.name for p in path.parent.iterdir()} - {f"{path.name}-wal", f"{path.name}-shm"}
    assert left == {path.name}


def test_status_reports_the_damaged_index_and_exits_1(damaged, capsys):
    _, path = damaged

    code = query_main(["status", "--store", str(path.parent), "--json"])

    out, err = capsys.readouterr()
    assert code == 1
    status = json.loads(out)["indexes"][INDEX]
    assert status["health"] == "damaged" and status["problems"]
    assert f"damaged index(es): {INDEX}" in err


def test_status_of_a_sound_index_says_ok(tmp_path: Path, capsys):
    ingest(tmp_path, copy_corpus(tmp_path))

    assert query_main(["status", "--store", str(store_dir(tmp_path)), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["indexes"][INDEX]["health"] == "ok"
