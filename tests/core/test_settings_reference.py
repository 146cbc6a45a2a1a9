"""The configuration reference (docs/configuration.md) is generated from the settings object:
one row per setting with its environment variable, config-file key, the config files that may
set it, default and meaning, and the page in the repository is that output."""

from __future__ import annotations

import shutil

import pytest

from core.settings import ENV_VARS, Settings
from core.settings_reference import (
    BEGIN,
    DEFAULT_TEXT,
    END,
    PAGE,
    REGENERATE,
    main,
    stale,
    table,
    with_table,
)
from tests.support.paths import ROOT


def test_the_page_in_the_repository_is_current():
    assert not stale(ROOT), f"{PAGE} is stale: run {REGENERATE}"


def test_every_setting_says_what_it_means():
    undocumented = sorted(n for n, f in Settings.model_fields.items() if not f.description)
    assert not undocumented, f"give these settings' Field a description=: {undocumented}"


def test_each_setting_is_one_row_naming_its_variable_and_its_config_key():
    rows = table().splitlines()[2:]
    assert len(rows) == len(Settings.model_fields)
    for row, (name, variable) in zip(rows, ENV_VARS.items(), strict=True):
        assert row.startswith(f"| `{variable}` | `{name}` | ")


def test_a_default_that_depends_on_the_machine_or_the_place_is_said_in_words():
    computed = {n for n, f in Settings.model_fields.items() if f.default_factory is not None}
    assert computed <= set(DEFAULT_TEXT)
    rows = {row.split(" | ")[1].strip("`"): row for row in table().splitlines()[2:]}
    assert "the user data folder (`data` in a clone)" in rows["data_dir"]
    assert "/home/" not in table() and "/Users/" not in table()


def test_values_are_spelled_as_a_config_file_writes_them():
    rows = {row.split(" | ")[1].strip("`"): row.split(" | ")[3] for row in table().splitlines()[2:]}
    assert rows["ingest_secrets"] == "`false`"
    assert rows["tidb_port"] == "`4000`"
    assert rows["llm_endpoint"] == "—"


def test_each_row_says_which_config_files_may_set_the_setting():
    rows = {row.split(" | ")[1].strip("`"): row.split(" | ")[2] for row in table().splitlines()[2:]}
    assert rows["chunk_target_tokens"] == "project or user file"
    assert rows["embedding_endpoint"] == "user file only"
    assert rows["hold_at"] == "environment only"


def test_only_the_text_between_the_markers_is_written():
    page = f"# By hand\n\n{BEGIN}\nold table\n{END}\n\nafter, by hand\n"
    written = with_table(page)
    assert written.startswith(f"# By hand\n\n{BEGIN}\n| environment variable |")
    assert written.endswith(f"{END}\n\nafter, by hand\n")
    assert "old table" not in written
    with pytest.raises(ValueError, match="needs the lines"):
        with_table("# no markers\n")


def test_check_reports_a_stale_page_without_writing_it_and_a_run_rewrites_it(tmp_path, capsys):
    (tmp_path / PAGE).parent.mkdir(parents=True)
    shutil.copy(ROOT / PAGE, tmp_path / PAGE)
    current = (tmp_path / PAGE).read_text(encoding="utf-8")
    start = current.index(BEGIN) + len(BEGIN)
    stale_page = current[:start] + "\n| an old row |\n" + current[current.index(END) :]
    (tmp_path / PAGE).write_text(stale_page, encoding="utf-8")

    assert main(["--check", "--repo", str(tmp_path)]) == 1
    assert "stale" in capsys.readouterr().err
    assert (tmp_path / PAGE).read_text(encoding="utf-8") == stale_page

    assert main(["--repo", str(tmp_path)]) == 0
    assert (tmp_path / PAGE).read_text(encoding="utf-8") == current
    assert main(["--check", "--repo", str(tmp_path)]) == 0
