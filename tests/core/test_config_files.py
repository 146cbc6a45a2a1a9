"""Config files and the default data folder: the settings' sources below the environment.

Precedence, highest first: command-line flags, environment variables, the project's
`.rag-retrieve.toml` (nearest at or above the current directory), the user's
`$XDG_CONFIG_HOME/rag-retrieve/config.toml`, defaults. A project's file may set only what
describes the project; what sends data somewhere, reads credentials, moves data or opens a
server comes from the user alone, and test hooks from the environment alone. A file that is
not the user's own is ignored. Indexes live in the clone's `data/` inside a clone of this
project, in the user data folder anywhere else.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.config_files import Sources
from core.settings import SOURCES, Settings, SettingsError
from tests.support.paths import ROOT

# Settings a hostile repository's file would use against its user (issue 36).
USER_ONLY = {
    "embedding_endpoint": '"http://evil.example:9000/embed"',
    "ingest_secrets": "true",
    "allowed_hosts": '"*"',
    "query_worker_url": '"http://evil.example:8765"',
    "tidb_host": '"evil.example"',
    "auth_token": '"known-to-the-attacker"',
    "index_dir": '"/tmp/elsewhere"',
    "embedding_model": '"./models/pickled"',
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A user's project, outside any clone of rag-retrieve."""
    directory = tmp_path / "MyApp"
    (directory / "Sources" / "App").mkdir(parents=True)
    return directory


@pytest.fixture
def user_config(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """An environment whose user config file is in the temporary directory."""
    home = tmp_path / "config-home"
    (home / "rag-retrieve").mkdir(parents=True)
    return {"XDG_CONFIG_HOME": str(home)}, home / "rag-retrieve" / "config.toml"


def test_inside_the_clone_indexes_stay_in_its_data_folder():
    assert Settings.from_env({}, cwd=ROOT).index_dir == Path("data/indexes")


def test_below_the_clones_root_its_data_folder_is_named_absolutely():
    assert Settings.from_env({}, cwd=ROOT / "tests" / "core").index_dir == ROOT / "data/indexes"


def test_outside_a_clone_indexes_live_in_the_user_data_folder(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "share"))
    settings = Settings.from_env({}, cwd=project)
    assert settings.index_dir == tmp_path / "share" / "rag-retrieve" / "indexes"
    assert settings.staging_dir == tmp_path / "share" / "rag-retrieve" / "staging"


def test_the_index_directory_variable_overrides_the_data_folder(project: Path):
    settings = Settings.from_env({"RAG_INDEX_DIR": "/srv/indexes"}, cwd=project)
    assert settings.index_dir == Path("/srv/indexes")


def test_a_project_config_file_value_is_used_and_named_as_its_source(project: Path):
    (project / ".rag-retrieve.toml").write_text("rrf_k = 30\n")
    settings = Settings.from_env({}, cwd=project / "Sources" / "App")
    assert settings.rrf_k == 30
    assert settings.origins() == {"rrf_k": str(project / ".rag-retrieve.toml")}


def test_a_config_file_takes_environment_variable_names_as_keys(project: Path):
    (project / ".rag-retrieve.toml").write_text("RAG_CHUNK_TARGET_TOKENS = 300\n")
    assert Settings.from_env({}, cwd=project).chunk_target_tokens == 300


def test_an_environment_variable_overrides_the_file_and_both_are_named(project: Path):
    (project / ".rag-retrieve.toml").write_text("rrf_k = 30\n")
    settings = Settings.from_env({"RAG_RRF_K": "7"}, cwd=project)
    assert settings.rrf_k == 7
    assert settings.origins()["rrf_k"] == (
        f"environment variable RAG_RRF_K (over {project / '.rag-retrieve.toml'})"
    )


def test_a_flag_overrides_the_environment(project: Path):
    settings = Settings.from_env({"RAG_RRF_K": "7"}, cwd=project, rrf_k=9)
    assert settings.rrf_k == 9
    assert settings.origins()["rrf_k"] == "command line (over environment variable RAG_RRF_K)"


def test_the_project_file_wins_over_the_users(
    project: Path, user_config: tuple[dict[str, str], Path]
):
    environ, user_file = user_config
    user_file.write_text("rrf_k = 10\ntidb_port = 5000\n")
    (project / ".rag-retrieve.toml").write_text("rrf_k = 30\n")
    settings = Settings.from_env(environ, cwd=project)
    assert (settings.rrf_k, settings.tidb_port) == (30, 5000)
    assert settings.origins()["tidb_port"] == str(user_file)


def test_relative_paths_in_a_config_file_are_relative_to_the_file(
    project: Path, user_config: tuple[dict[str, str], Path]
):
    environ, user_file = user_config
    user_file.write_text('index_dir = "rag/indexes"\n')
    settings = Settings.from_env(environ, cwd=project / "Sources")
    assert settings.index_dir == user_file.parent / "rag" / "indexes"


def test_an_unknown_key_is_an_error_naming_the_file_and_the_nearest_setting(project: Path):
    (project / ".rag-retrieve.toml").write_text("rrf = 30\n")
    with pytest.raises(SettingsError, match=r"\.rag-retrieve\.toml: unknown setting 'rrf' "):
        Settings.from_env({}, cwd=project)


def test_a_toml_syntax_error_names_the_file_and_line(project: Path):
    (project / ".rag-retrieve.toml").write_text('rrf_k = 30\ntidb_host = "unclosed\n')
    with pytest.raises(SettingsError, match=r"\.rag-retrieve\.toml: .*line 2"):
        Settings.from_env({}, cwd=project)


def test_a_wrong_value_in_a_file_names_the_variable_and_the_file(project: Path):
    (project / ".rag-retrieve.toml").write_text('rrf_k = "many"\n')
    with pytest.raises(SettingsError, match=r"RAG_RRF_K='many' \(from .*\.rag-retrieve\.toml\)"):
        Settings.from_env({}, cwd=project)


def test_a_table_is_not_a_setting(project: Path):
    (project / ".rag-retrieve.toml").write_text("[tidb]\nhost = 'x'\n")
    with pytest.raises(SettingsError, match="'tidb' is a table"):
        Settings.from_env({}, cwd=project)


def test_without_a_home_in_the_given_environment_no_user_file_is_read(project: Path):
    assert Settings.from_env({}, cwd=project).origins() == {}


@pytest.mark.parametrize("key", sorted(USER_ONLY))
def test_a_project_file_setting_a_user_only_key_is_refused_naming_key_file_and_where(
    project: Path, key: str
):
    path = project / ".rag-retrieve.toml"
    path.write_text(f"{key} = {USER_ONLY[key]}\n")
    with pytest.raises(SettingsError) as refused:
        Settings.from_env({}, cwd=project / "Sources")
    message = str(refused.value)
    assert f"{path}: {key!r} may not be set in this file" in message
    assert "in the environment or" in message and "user config file" in message


def test_a_refused_key_spelled_as_its_variable_is_named_as_written(project: Path):
    (project / ".rag-retrieve.toml").write_text('EMBEDDING_ENDPOINT = "http://evil.example"\n')
    with pytest.raises(SettingsError, match=r"'EMBEDDING_ENDPOINT' may not be set"):
        Settings.from_env({}, cwd=project)


def test_the_user_file_may_set_what_a_project_file_may_not(
    project: Path, user_config: tuple[dict[str, str], Path]
):
    environ, user_file = user_config
    user_file.write_text("".join(f"{key} = {value}\n" for key, value in USER_ONLY.items()))
    settings = Settings.from_env(environ, cwd=project)
    assert settings.embedding_endpoint == "http://evil.example:9000/embed"
    assert settings.ingest_secrets is True
    assert settings.tidb_host == "evil.example"
    assert settings.bearer_token == "known-to-the-attacker"


@pytest.mark.parametrize("where", ["project", "user"])
def test_no_config_file_may_set_a_test_hook(
    project: Path, user_config: tuple[dict[str, str], Path], where: str
):
    environ, user_file = user_config
    path = project / ".rag-retrieve.toml" if where == "project" else user_file
    path.write_text('hold_at = "load:1"\n')
    with pytest.raises(SettingsError, match=r"'hold_at' may not be set .*RAG_HOLD_AT"):
        Settings.from_env(environ, cwd=project)
    assert Settings.from_env({"RAG_HOLD_AT": "load:1"}, cwd=ROOT).hold_at == "load:1"


def test_every_connection_endpoint_and_folder_setting_is_kept_from_project_files():
    kept = {name for name, sources in SOURCES.items() if sources is not Sources.PROJECT}
    tidb = {"tidb_host", "tidb_port", "tidb_user", "tidb_password", "tidb_database"}
    assert tidb | {"tidb_ssl_ca", "tidb_ssl", "tidb_ssl_verify"} <= kept
    endpoints = {name for name in SOURCES if "endpoint" in name or name.endswith("_url")}
    assert endpoints and endpoints <= kept
    folders = {name for name, field in Settings.model_fields.items() if field.annotation is Path}
    assert folders and folders <= kept


def test_a_config_file_writable_by_others_is_ignored_with_a_warning(
    project: Path, caplog: pytest.LogCaptureFixture
):
    path = project / ".rag-retrieve.toml"
    path.write_text("rrf_k = 30\n")
    path.chmod(0o666)
    with caplog.at_level(logging.WARNING, logger="rag.settings"):
        settings = Settings.from_env({}, cwd=project)
    assert settings.rrf_k == 60 and settings.origins() == {}
    assert f"ignoring config file {path}: writable by others" in caplog.text


def test_a_user_file_writable_by_its_group_is_ignored_with_a_warning(
    project: Path, user_config: tuple[dict[str, str], Path], caplog: pytest.LogCaptureFixture
):
    environ, user_file = user_config
    user_file.write_text("rrf_k = 30\n")
    user_file.chmod(0o664)
    with caplog.at_level(logging.WARNING, logger="rag.settings"):
        assert Settings.from_env(environ, cwd=project).rrf_k == 60
    assert f"ignoring config file {user_file}" in caplog.text


def test_a_config_file_another_user_owns_is_ignored_with_a_warning(
    project: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
):
    path = project / ".rag-retrieve.toml"
    path.write_text("rrf_k = 30\n")
    owner = path.stat().st_uid
    monkeypatch.setattr(os, "getuid", lambda: owner + 1)  # as seen by another user
    with caplog.at_level(logging.WARNING, logger="rag.settings"):
        assert Settings.from_env({}, cwd=project).rrf_k == 60
    assert f"owned by uid {owner}, not by you" in caplog.text


def cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """`python -m query ...` run from `cwd`, with this checkout's code and no user file."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("RAG_", "TIDB_"))}
    environment |= {"PYTHONPATH": str(ROOT), "XDG_CONFIG_HOME": str(cwd / ".no-config")}
    return subprocess.run(
        [sys.executable, "-m", "query", *args],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_cli_exits_2_naming_the_key_and_the_file_a_project_may_not_set(project: Path):
    path = project / ".rag-retrieve.toml"
    path.write_text('embedding_endpoint = "http://evil.example:9000/embed"\n')
    done = cli(["where is the trip saved"], project)
    assert done.returncode == 2
    assert f"{path}: 'embedding_endpoint' may not be set in this file" in done.stderr


def test_the_cli_warns_on_stderr_of_a_config_file_it_ignores(project: Path, tmp_path: Path):
    path = project / ".rag-retrieve.toml"
    path.write_text("rrf_k = 30\n")
    path.chmod(0o646)
    (tmp_path / "store").mkdir()
    done = cli(["status", "--store", str(tmp_path / "store")], project)
    assert done.returncode == 0
    assert f"ignoring config file {path}: writable by others" in done.stderr


def test_a_repository_whose_pyproject_names_this_project_does_not_hold_the_indexes(
    project: Path,
):
    # A clone from the internet could say it is rag-retrieve to have the indexes, the
    # embedding cache and the corpora file read from (and planted in) its own data/.
    (project / "pyproject.toml").write_text('[project]\nname = "rag-retrieve"\n')
    settings = Settings.from_env({}, cwd=project / "Sources")
    assert not settings.index_dir.resolve().is_relative_to(project)
    assert not settings.corpora_file.resolve().is_relative_to(project)


def test_every_refused_key_of_a_file_is_named_at_once(project: Path):
    path = project / ".rag-retrieve.toml"
    path.write_text('embedding_endpoint = "http://evil.example"\ningest_secrets = true\n')
    with pytest.raises(SettingsError) as refused:
        Settings.from_env({}, cwd=project)
    lines = str(refused.value).splitlines()
    assert [line.split(": ")[1] for line in lines] == [
        "'embedding_endpoint' may not be set in this file",
        "'ingest_secrets' may not be set in this file",
    ]
