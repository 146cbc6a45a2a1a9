"""Commands that only read never change a store: `status`, `doctor`, a question and `symbol`
open its files read-only, work on a store whose files and folder are read-only, and refuse an
index older than the code with the step that upgrades it (`rag-retrieve migrate`, exit 2)
instead of migrating it themselves. Writers still migrate on open."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
import stat
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest

import core.store.migrations as runner
import core.store.sqlite.schema as schema
from core.store.contract import SchemaOutdated
from core.store.sqlite.store import SQLiteStore
from query.cli.main import main as query_main
from query.errors import UsageError
from query.navigation.lookup import find_symbol
from query.retrieval.pipeline import answer, make_request
from rag_retrieve.cli import main as rag_retrieve
from sql import Migration, migrations
from tests.support.navigation import NAVIGATION, ingest_into, keyword_engine


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    return ingest_into(tmp_path_factory.mktemp("read_only"), NAVIGATION)


@pytest.fixture
def store(built: Path, tmp_path: Path) -> Path:
    """A copy of the ingested store (each test may make it read-only or outdated)."""
    copy = tmp_path / "store"
    shutil.copytree(built, copy)
    return copy


@pytest.fixture
def opened_modes(monkeypatch) -> list[str]:
    """The `mode` of every SQLite connection opened to an index file from here on."""
    modes: list[str] = []
    real = sqlite3.connect

    def spying(database, *args, **kwargs):
        if str(database).startswith("file:") and ".sqlite" in str(database):
            modes.append(str(database).split("mode=", 1)[1])
        return real(database, *args, **kwargs)

    monkeypatch.setattr(schema.sqlite3, "connect", spying)
    return modes


def fingerprint(store: Path) -> dict[str, tuple[str, int]]:
    """Each index file's hash and mtime."""
    return {
        p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
        for p in sorted(store.glob("*.sqlite"))
    }


@pytest.fixture
def read_only(store: Path) -> Iterator[Path]:
    """The store with its index files and its folder made read-only (chmod a-w). Root
    writes to them anyway: what the tests then check is that every connection was opened
    mode=ro (SQLite refuses any write through one) and that the files' bytes and mtimes
    stayed."""
    files = [store, *store.glob("*.sqlite")]
    for path in files:
        path.chmod(path.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    try:
        yield store
    finally:
        for path in files:
            path.chmod(path.stat().st_mode | stat.S_IWUSR)


def ask(store: Path, question: str) -> dict:
    engine = keyword_engine(store)
    try:
        return answer(make_request({"query": question, "top_k": 3}), engine).to_dict()
    finally:
        engine.close()


def test_status_reads_a_read_only_store_without_changing_it(read_only, opened_modes, capsys):
    before = fingerprint(read_only)
    assert query_main(["status", "--store", str(read_only), "--json"]) == 0
    assert '"health": "ok"' in capsys.readouterr().out
    assert fingerprint(read_only) == before
    assert opened_modes and all(mode.startswith("ro") for mode in opened_modes)


def test_doctor_reads_a_read_only_store_without_changing_it(read_only, opened_modes, capsys):
    before = fingerprint(read_only)
    query_main(["doctor", "--store", str(read_only), "--json"])
    out = capsys.readouterr().out
    assert '"index app"' in out and "not writable" not in out
    assert fingerprint(read_only) == before
    assert opened_modes and all(mode.startswith("ro") for mode in opened_modes)


def test_a_question_on_a_read_only_store_is_answered_without_changing_it(read_only, opened_modes):
    before = fingerprint(read_only)
    assert ask(read_only, "greet times")["chunks"]
    assert fingerprint(read_only) == before
    assert opened_modes and all(mode.startswith("ro") for mode in opened_modes)


def test_symbol_on_a_read_only_store_finds_it_without_changing_it(read_only, opened_modes, capsys):
    before = fingerprint(read_only)
    assert query_main(["symbol", "draw", "--store", str(read_only), "--json"]) == 0
    assert '"definitions": [{' in capsys.readouterr().out
    assert fingerprint(read_only) == before
    assert opened_modes and all(mode.startswith("ro") for mode in opened_modes)


def test_lookups_read_through_the_engines_handles_opening_each_index_once(store, monkeypatch):
    opened: list[str] = []
    real = SQLiteStore.open_index

    def counting(self, name, **kwargs):
        opened.append(name)
        return real(self, name, **kwargs)

    monkeypatch.setattr(SQLiteStore, "open_index", counting)
    engine = keyword_engine(store)
    try:
        assert find_symbol(engine.checkout, "draw", ["app"])["definitions"]
        assert find_symbol(engine.checkout, "greet:times:", ["app"])["definitions"]
    finally:
        engine.close()
    assert opened == ["app"]


# An index older than the code


def outdated(store: Path) -> None:
    """As if a writer of an older version had left the file: its full text indexed by
    another analyzer, its text fingerprints never filled."""
    with closing(sqlite3.connect(store / "app.sqlite")) as conn, conn:
        conn.execute("UPDATE meta SET fts_analyzer = 0, text_keys_filled = 0")


def test_a_reader_refuses_an_outdated_index_and_leaves_it_as_it_was(store, opened_modes):
    outdated(store)
    before = fingerprint(store)
    with pytest.raises(SchemaOutdated, match="rag-retrieve migrate"):
        SQLiteStore(store).open_index("app")
    assert fingerprint(store) == before
    assert all(mode.startswith("ro") for mode in opened_modes)


def test_a_reader_names_the_migrations_an_index_lacks(store, monkeypatch):
    later = Migration(9999, "9999_later", "CREATE TABLE later (x INTEGER);")
    monkeypatch.setattr(runner, "migrations", lambda dialect: (*migrations(dialect), later))
    with pytest.raises(SchemaOutdated, match="9999_later"):
        SQLiteStore(store).open_index("app")


def test_status_and_symbol_exit_2_on_an_outdated_index_and_say_how_to_upgrade(store, capsys):
    outdated(store)
    before = fingerprint(store)
    assert query_main(["status", "--store", str(store)]) == 2
    assert "rag-retrieve migrate" in capsys.readouterr().err
    assert query_main(["symbol", "draw", "--store", str(store)]) == 2
    assert "rag-retrieve migrate" in capsys.readouterr().err
    assert fingerprint(store) == before


def test_a_question_on_an_outdated_index_is_a_usage_error_naming_the_upgrade(store):
    outdated(store)
    with pytest.raises(UsageError, match="rag-retrieve migrate"):
        ask(store, "greet times")


def test_rag_retrieve_migrate_upgrades_the_index_for_readers(store, capsys, monkeypatch):
    outdated(store)
    later = Migration(9999, "9999_later", "CREATE TABLE later (x INTEGER);")
    monkeypatch.setattr(runner, "migrations", lambda dialect: (*migrations(dialect), later))
    assert rag_retrieve(["migrate", "--store", str(store)]) == 0
    assert "app: migrated to schema version 9999" in capsys.readouterr().out
    with closing(sqlite3.connect(store / "app.sqlite")) as conn:
        assert conn.execute("SELECT fts_analyzer, text_keys_filled FROM meta").fetchone()[1] == 1
    SQLiteStore(store).open_index("app").close()  # a reader opens it now
    assert rag_retrieve(["migrate", "--store", str(store)]) == 0
    assert "app: up to date at schema version 9999" in capsys.readouterr().out


def test_a_writer_still_migrates_on_open(store):
    outdated(store)
    SQLiteStore(store).open_index("app", write=True).close()
    index = SQLiteStore(store).open_index("app")
    try:
        assert index.stats()["chunks"] > 0
    finally:
        index.close()


def test_a_handle_that_only_reads_cannot_write(store):
    index = SQLiteStore(store).open_index("app")
    try:
        with pytest.raises(Exception, match="opened to read only"):
            index.record_fusion_calibration(None)
    finally:
        index.close()
