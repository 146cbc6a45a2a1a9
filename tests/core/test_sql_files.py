"""The SQL of both dialects: named statements grouped by concern, and numbered migrations."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import sql
from sql import SQLNotFound, migrations, statement, statement_names

SQL_DIR = Path(sql.__file__).parent
DIALECTS = ["sqlite", "tidb"]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_every_named_statement_is_loaded_without_its_comments(dialect):
    declared = set()
    for path in SQL_DIR.joinpath(dialect).glob("*.sql"):
        declared |= set(re.findall(r"^-- name: (\w+)", path.read_text(), re.M))
    assert set(statement_names(dialect)) == declared
    for name in declared:
        text = statement(dialect, name)
        assert text and not any(line.lstrip().startswith("--") for line in text.splitlines())


@pytest.mark.parametrize("dialect", DIALECTS)
def test_no_file_holds_a_single_statement(dialect):
    for path in SQL_DIR.joinpath(dialect).glob("*.sql"):
        assert len(re.findall(r"^-- name: ", path.read_text(), re.M)) > 1, path.name


@pytest.mark.parametrize("dialect", DIALECTS)
def test_migrations_are_numbered_from_one_without_gaps(dialect):
    found = migrations(dialect)
    assert [m.version for m in found] == list(range(1, len(found) + 1))
    assert found[0].name == "0001_initial" and "CREATE TABLE" in found[0].script


def test_an_unknown_statement_or_dialect_is_named_in_the_error():
    with pytest.raises(SQLNotFound, match="no_such_statement"):
        statement("sqlite", "no_such_statement")
    with pytest.raises(SQLNotFound, match="oracle"):
        statement("oracle", "x")
    with pytest.raises(SQLNotFound):
        statement("../sqlite", "x")


def test_a_statement_named_twice_is_refused_with_both_files(tmp_path, monkeypatch):
    folder = tmp_path / "sqlite"
    folder.mkdir()
    folder.joinpath("a.sql").write_text("-- name: get_x\nSELECT 1;\n")
    folder.joinpath("b.sql").write_text("-- name: get_x\nSELECT 2;\n")
    monkeypatch.setattr(sql, "_folder", lambda dialect: folder)
    sql._statements.cache_clear()
    try:
        with pytest.raises(ValueError, match=r"a\.sql.*b\.sql"):
            sql.statement("sqlite", "get_x")
    finally:
        sql._statements.cache_clear()
