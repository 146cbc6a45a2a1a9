"""Config files and the default data folder: the settings' sources below the environment.

Precedence, highest first: command-line flags, environment variables, the project's
`.rag-retrieve.toml` (nearest at or above the current directory), the user's
`$XDG_CONFIG_HOME/rag-retrieve/config.toml`, defaults. Indexes live in the clone's `data/`
inside a clone of this project, in the user data folder anywhere else.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from core.settings import Settings, SettingsError
from tests.support.paths import ROOT


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
    (project / ".rag-retrieve.toml").write_text('TIDB_HOST = "db.internal"\n')
    assert Settings.from_env({}, cwd=project).tidb_host == "db.internal"


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


def test_relative_paths_in_a_config_file_are_relative_to_the_file(project: Path):
    (project / ".rag-retrieve.toml").write_text('index_dir = ".rag/indexes"\n')
    settings = Settings.from_env({}, cwd=project / "Sources")
    assert settings.index_dir == project / ".rag" / "indexes"


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
