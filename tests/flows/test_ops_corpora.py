"""The corpora file: what a valid one means, and how a broken one is reported."""

from __future__ import annotations

from pathlib import Path

import pytest

from flows import serve
from flows.corpora import CorporaError, load_corpora
from tests.support.ops import ROOT

VALID = """
[corpora.guides]
paths = ["docs"]
source = "guides"
domain = "ios"
index = "guides"
refresh_schedule = "*/15 * * * *"
reverify_schedule = "0 4 * * 1"
timezone = "Europe/Berlin"
freshness_days = 7
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "intro.md").write_text("# Intro\n")
    return tmp_path


def write(folder: Path, text: str) -> Path:
    path = folder / "corpora.toml"
    path.write_text(text, encoding="utf-8")
    return path


def error_of(path: Path) -> str:
    with pytest.raises(CorporaError) as caught:
        load_corpora(path)
    return str(caught.value)


def test_checked_in_file_maintains_the_sample_corpus() -> None:
    corpora = load_corpora(ROOT / "data" / "corpora.toml")
    sample = corpora["sample"]
    assert sample.paths == [str(ROOT / "data" / "sample")]
    assert sample.refresh_schedule and sample.reverify_schedule
    assert sample.freshness_days >= 1


def test_every_field_is_read_and_paths_are_relative_to_the_file(folder: Path) -> None:
    guides = load_corpora(write(folder, VALID))["guides"]
    assert guides.paths == [str(folder / "docs")]
    assert (guides.source, guides.domain, guides.index) == ("guides", "ios", "guides")
    assert guides.schedules() == [("refresh", "*/15 * * * *"), ("reverify", "0 4 * * 1")]
    assert (guides.timezone, guides.freshness_days) == ("Europe/Berlin", 7)


def test_unknown_key_is_named_with_the_file_and_the_allowed_keys(folder: Path) -> None:
    path = write(folder, VALID.replace("freshness_days", "freshnes_days"))
    message = error_of(path)
    assert f"{path}: corpora.guides.freshnes_days: unknown key" in message
    assert "freshness_days" in message


def test_unknown_top_level_table_is_named(folder: Path) -> None:
    path = write(folder, VALID + "\n[corpus.other]\npaths = []\n")
    assert f"{path}: corpus: unknown key (allowed: corpora)" in error_of(path)


@pytest.mark.parametrize("cron", ["61 * * * *", "* * *", "0 3 * * 8", "every day"])
def test_bad_cron_is_rejected_naming_the_key(folder: Path, cron: str) -> None:
    path = write(folder, VALID.replace('"0 4 * * 1"', f'"{cron}"'))
    assert f'{path}: corpora.guides.reverify_schedule: Invalid cron string: "{cron}"' in (
        error_of(path)
    )


def test_missing_path_is_rejected_naming_it(folder: Path) -> None:
    path = write(folder, VALID.replace('["docs"]', '["docs", "gone", "lost/*.md"]'))
    message = error_of(path)
    assert f"{path}: corpora.guides.paths: no such file or directory" in message
    assert "'gone'" in message and "'lost/*.md'" in message
    assert "'docs'" not in message


def test_glob_under_an_existing_folder_is_accepted_before_it_matches(folder: Path) -> None:
    path = write(folder, VALID.replace('["docs"]', '["docs/**/*.jsonl"]'))
    assert load_corpora(path)["guides"].paths == [str(folder / "docs/**/*.jsonl")]


def test_unknown_domain_and_time_zone_are_each_reported(folder: Path) -> None:
    path = write(folder, VALID.replace('"ios"', '"cooking"').replace("Europe/Berlin", "Mars/Base"))
    message = error_of(path)
    assert f"{path}: corpora.guides.domain:" in message and "'ios'" in message
    assert f'{path}: corpora.guides.timezone: Invalid timezone: "Mars/Base"' in message


def test_corpus_name_must_suit_an_artifact_key(folder: Path) -> None:
    path = write(folder, VALID.replace("[corpora.guides]", "[corpora.My_Guides]"))
    assert f"{path}: corpora.My_Guides: corpus names use lowercase letters" in error_of(path)


def test_invalid_toml_names_the_file_and_line(folder: Path) -> None:
    path = write(folder, VALID.replace('index = "guides"', "index = guides"))
    assert error_of(path).startswith(f"{path}: invalid TOML:")
    assert "line 6" in error_of(path)


def test_missing_file_says_which_setting_names_it(tmp_path: Path) -> None:
    assert "set RAG_CORPORA_FILE" in error_of(tmp_path / "absent.toml")


def test_serve_check_prints_each_corpus_schedule(
    folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("RAG_CORPORA_FILE", str(write(folder, VALID)))
    assert serve.main(["--check"]) == 0
    out = capsys.readouterr().out
    assert "corpus guides → index guides" in out
    assert "refresh: */15 * * * * (Europe/Berlin)" in out
    assert "reverify: 0 4 * * 1 (Europe/Berlin)" in out


def test_serve_refuses_to_start_on_a_broken_file(
    folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("RAG_CORPORA_FILE", str(write(folder, VALID.replace("0 4", "0 44"))))
    assert serve.main([]) == 2
    assert "corpora.guides.reverify_schedule" in capsys.readouterr().err


def test_each_corpus_schedule_carries_the_corpus_as_parameter(folder: Path) -> None:
    api = '[corpora.api]\npaths = ["docs"]\nrefresh_schedule = "0 1 * * *"\n'
    corpora = load_corpora(write(folder, VALID + api))
    refresh = serve.schedules_for(corpora, "refresh")
    reverify = serve.schedules_for(corpora, "reverify")
    assert [(s.cron, s.timezone, s.parameters) for s in refresh] == [
        ("*/15 * * * *", "Europe/Berlin", {"corpus": "guides"}),
        ("0 1 * * *", "UTC", {"corpus": "api"}),
    ]
    assert [s.parameters for s in reverify] == [{"corpus": "guides"}]
