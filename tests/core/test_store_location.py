"""StoreLocation: what `--store` names, parsed once. A directory is local; a tidb:// or
mysql:// URL is remote and shown without its password; the configured default is TiDB when
TIDB_HOST is set, else RAG_INDEX_DIR; anything else with a scheme is refused by name."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.settings import Settings
from core.store.errors import InvalidLocation
from core.store.location import StoreLocation
from core.store.open import open_store


def test_a_directory_is_local():
    location = StoreLocation.parse("data/indexes")

    assert not location.is_remote
    assert location.directory == Path("data/indexes")
    assert location.display == "data/indexes"


def test_a_path_object_is_a_directory_even_with_a_colon_in_it():
    location = StoreLocation.parse(Path("odd:name"))

    assert location.directory == Path("odd:name") and not location.is_remote


def test_a_tidb_url_is_remote_and_its_parts_override_the_settings():
    location = StoreLocation.parse("tidb://alice:p%40ss@db.example:4001/rag2?ssl=true")
    settings = Settings(tidb_host="settings-host", tidb_user="u", tidb_database="rag")

    endpoint = location.endpoint(settings)

    assert location.is_remote and location.directory is None
    assert (endpoint.host, endpoint.port, endpoint.user, endpoint.password) == (
        "db.example",
        4001,
        "alice",
        "p@ss",
    )
    assert endpoint.database == "rag2" and endpoint.tls


def test_a_tidb_url_is_shown_without_its_password():
    location = StoreLocation.parse("tidb://alice:secret@db.example:4001/rag")

    assert location.display == "tidb://alice:***@db.example:4001/rag"
    assert "secret" not in str(location)


def test_a_mysql_url_is_remote_too():
    location = StoreLocation.parse("mysql://root@127.0.0.1:3306/rag")

    assert location.is_remote
    assert location.endpoint(Settings()).describe() == "127.0.0.1:3306/rag"


def test_bare_tidb_means_the_settings():
    location = StoreLocation.parse("tidb://")
    endpoint = location.endpoint(Settings(tidb_host="h", tidb_port=4000, tidb_database="rag"))

    assert location.dsn is not None and location.dsn.bare
    assert endpoint.describe() == "h:4000/rag"


def test_none_is_tidb_when_tidb_host_is_set_else_the_index_directory(tmp_path: Path):
    remote = StoreLocation.of(None, Settings(tidb_host="h"))
    local = StoreLocation.of(None, Settings(index_dir=tmp_path / "indexes"))

    assert remote.is_remote and remote.text == "tidb://"
    assert local.directory == tmp_path / "indexes"


@pytest.mark.parametrize(
    ("value", "complaint"),
    [
        ("http://example.com/rag", "not a store URL"),
        ("tidb://alice@:4000/rag", "no host"),
        ("tidb://db.example:port/rag", "bad port"),
        ("tidb://db.example:99999/rag", "bad port"),
        ("tidb://db.example/rag?sslmode=require", "unknown tidb:// URL option"),
        ("tidb://db.example/rag?ssl=maybe", "use true or false"),
    ],
)
def test_a_bad_url_is_refused_naming_it(value: str, complaint: str):
    with pytest.raises(InvalidLocation) as refused:
        StoreLocation.parse(value)

    assert f"store {value!r}" in str(refused.value)
    assert complaint in str(refused.value)


def test_a_bad_url_is_named_without_its_password():
    with pytest.raises(InvalidLocation) as refused:
        StoreLocation.parse("tidb://alice:secret@db.example:port/rag")

    assert "secret" not in str(refused.value)
    assert "tidb://alice:***@db.example:port/rag" in str(refused.value)


def test_directories_are_the_same_store_when_they_resolve_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "store").mkdir()

    relative, absolute = StoreLocation.parse("store"), StoreLocation.parse(str(tmp_path / "store"))

    assert relative.same_as(absolute)
    assert not relative.same_as(StoreLocation.parse(str(tmp_path / "other")))


def test_urls_are_the_same_store_as_written_and_never_a_directory():
    url = StoreLocation.parse("tidb://alice@db.example:4000/rag")

    assert url.same_as(StoreLocation.parse("tidb://alice@db.example:4000/rag/"))
    assert not url.same_as(StoreLocation.parse("tidb://alice@db.example:4000/other"))
    assert not url.same_as(StoreLocation.parse("rag"))


def test_opening_a_bad_url_fails_before_anything_is_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.chdir(tmp_path)

    with pytest.raises(InvalidLocation, match="not a store URL"):
        open_store("http://example.com/rag", Settings(index_dir=tmp_path / "indexes"))

    assert list(tmp_path.iterdir()) == []  # no "http:" directory


def test_a_nul_character_is_refused_as_a_location_not_a_crash():
    # A request body can carry one; os calls would raise a bare ValueError (a 500).
    with pytest.raises(InvalidLocation, match="NUL character"):
        StoreLocation.parse("\x00")
