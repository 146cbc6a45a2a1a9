"""The one settings object: defaults, the environment under the documented names, overrides."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.settings import ENV_VARS, Settings, SettingsError


def test_defaults_need_no_environment():
    settings = Settings.from_env({})
    assert settings.tidb_port == 4000 and settings.index_dir == Path("data/indexes")


def test_environment_variables_are_read_under_their_documented_names():
    settings = Settings.from_env(
        {"TIDB_HOST": "db.example", "TIDB_PORT": "4001", "RAG_PREFECT_TELEMETRY": "yes"}
    )
    assert (settings.tidb_host, settings.tidb_port, settings.prefect_telemetry) == (
        "db.example",
        4001,
        True,
    )


def test_an_empty_variable_counts_as_unset():
    assert Settings.from_env({"TIDB_HOST": "", "TIDB_PORT": ""}).tidb_port == 4000


def test_field_names_are_not_environment_variables():
    assert Settings.from_env({"tidb_port": "1"}).tidb_port == 4000


def test_overrides_win_over_the_environment_and_none_means_not_given():
    settings = Settings.from_env({"TIDB_PORT": "4001"}, tidb_port=5000, tidb_host=None)
    assert settings.tidb_port == 5000 and settings.tidb_host is None


def test_constructing_directly_ignores_the_process_environment(monkeypatch):
    monkeypatch.setenv("TIDB_PORT", "4999")
    assert Settings().tidb_port == 4000
    assert Settings.from_env().tidb_port == 4999


def test_a_malformed_number_names_the_variable_and_the_value():
    with pytest.raises(SettingsError, match=r"TIDB_PORT='abc'.*integer"):
        Settings.from_env({"TIDB_PORT": "abc"})


def test_a_choice_outside_its_set_lists_the_choices():
    with pytest.raises(SettingsError, match=r"RAG_EMBEDDING_RUNTIME='cuda'.*'mlx'"):
        Settings.from_env({"RAG_EMBEDDING_RUNTIME": "cuda"})


def test_limits_that_must_be_positive_refuse_zero():
    with pytest.raises(SettingsError, match="RAG_WORKER_THREADS"):
        Settings.from_env({"RAG_WORKER_THREADS": "0"})


def test_the_chunk_target_may_not_exceed_the_hard_maximum():
    with pytest.raises(SettingsError, match="RAG_CHUNK_TARGET_TOKENS"):
        Settings.from_env({"RAG_CHUNK_TARGET_TOKENS": "900", "RAG_CHUNK_MAX_TOKENS": "512"})


def test_booleans_take_the_usual_spellings():
    for raw, expected in [("1", True), ("on", True), ("false", False), ("no", False)]:
        assert Settings.from_env({"TIDB_SSL": raw}).tidb_ssl is expected


def test_with_changes_a_copy_and_validates_it():
    base = Settings()
    assert base.with_(tidb_port=4100).tidb_port == 4100 and base.tidb_port == 4000
    with pytest.raises(SettingsError, match="TIDB_PORT"):
        base.with_(tidb_port=-1)


def test_settings_are_immutable():
    with pytest.raises(Exception, match="frozen"):
        Settings().tidb_port = 1  # type: ignore[misc]


def test_every_field_has_exactly_one_variable_and_no_two_share_one():
    assert set(ENV_VARS) == set(Settings.model_fields)
    assert len(set(ENV_VARS.values())) == len(ENV_VARS)
