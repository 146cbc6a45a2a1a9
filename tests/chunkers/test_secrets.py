"""Credentials stay out of an index: a directory walk passes over the folders that hold
them and the files named like them, even where the type is read, and counts each with the
reason; the user may opt in, and a file named on the command line is read as asked."""

from __future__ import annotations

import os
import shutil
from collections import Counter
from pathlib import Path

import pytest

from chunkers.sources.discovery import discover, walk_directory, walked
from tests.support import paths

CREDENTIALS = paths.FIXTURES / "sources" / "credentials"
OWN_FILES = ["Sources/AppConfig.swift", "deploy/README.md"]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return Path(shutil.copytree(CREDENTIALS, tmp_path / "project"))


def relative(root: Path, files) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in files)


def test_a_walk_reads_the_users_files_and_no_credentials(tree: Path):
    assert relative(tree, walk_directory(tree)) == OWN_FILES


def test_each_passed_over_credential_is_counted_with_the_reason(tree: Path):
    skipped: Counter[str] = Counter()
    list(walk_directory(tree, skipped))
    credentials = {k: n for k, n in skipped.items() if k.startswith("credentials: ")}
    assert credentials == {
        "credentials: .ssh/": 1,
        "credentials: .docker/": 1,
        "credentials: gcloud/": 1,
        "credentials: .env": 1,
        "credentials: .env.production": 1,
        "credentials: secrets.yaml": 1,
        "credentials: credentials.json": 1,
        "credentials: server.pem": 1,
    }


def test_opting_in_reads_the_credentials_whose_type_is_read(tree: Path):
    found = relative(tree, walk_directory(tree, secrets=True))
    assert found == sorted(
        [
            *OWN_FILES,
            ".config/gcloud/application_default_credentials.json",
            ".docker/config.json",
            ".ssh/notes.md",
            "deploy/credentials.json",
            "secrets.yaml",
        ]
    )


@pytest.mark.parametrize("secrets", [False, True])
def test_walked_answers_for_credentials_as_the_walk_does(tree: Path, secrets: bool):
    every_file = [Path(d) / name for d, _, names in os.walk(tree) for name in names]
    walk = set(walk_directory(tree, secrets=secrets))
    assert {p for p in every_file if walked(tree, p, secrets=secrets)} == walk
    assert walked(tree, tree / ".ssh", is_dir=True, secrets=secrets) is secrets


def test_a_file_named_on_the_command_line_is_read_as_asked(tree: Path):
    named = tree / "secrets.yaml"
    assert [s.path for s in discover([named])] == [named]


def test_a_code_file_whose_name_merely_starts_like_a_key_is_read(tree: Path):
    (tree / "Sources" / "id_generator.swift").write_text("func nextID() -> Int { 1 }\n")
    assert "Sources/id_generator.swift" in relative(tree, walk_directory(tree))
