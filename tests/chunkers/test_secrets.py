"""Credentials stay out of an index: a directory walk or a glob passes over the folders that
hold them and the files named like them, even where the type is read, and the files whose
content holds a key, and counts each with the reason; the user may opt in, and a file a
person names on the command line is read as asked (the MCP tool's are not)."""

from __future__ import annotations

import os
import shutil
from collections import Counter
from pathlib import Path

import pytest

from chunkers.sources.discovery import discover, named_credentials, walk_directory, walked
from chunkers.sources.reading import Defaults, ReadResult, read_all
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


# -- the MCP ingest tool's path: `discover(..., within=roots)` ---------------------------

CONTENT = paths.FIXTURES / "sources" / "credential_content"
# Credentials of the platforms our users build for, by the name each is saved under.
PLATFORM_CREDENTIALS = [
    "GoogleService-Info.plist",
    "google-services.json",
    ".netrc",
    ".cargo/credentials.toml",
    "Distribution.p12",
    "Development.mobileprovision",
    "AuthKey_ABC123DEFG.p8",
]


@pytest.fixture
def app(tmp_path: Path) -> Path:
    """An allowed root holding an app folder with a credential among its JSON files."""
    root = tmp_path / "root"
    (root / "app").mkdir(parents=True)
    (root / "app" / "package.json").write_text('{"name": "app"}\n')
    (root / "app" / "credentials.json").write_text('{"client_secret": "s3cr3t"}\n')
    return root


def test_a_glob_through_the_mcp_path_passes_over_credentials(app: Path):
    skipped: Counter[str] = Counter()
    found = discover([app / "app" / "*.json"], skipped, within=[app])
    assert [s.path.name for s in found] == ["package.json"]
    assert skipped["credentials: credentials.json"] == 1


def test_a_credential_named_by_its_path_through_the_mcp_path_is_passed_over(app: Path):
    skipped: Counter[str] = Counter()
    assert discover([app / "app" / "credentials.json"], skipped, within=[app]) == []
    assert skipped["credentials: credentials.json"] == 1


def test_a_file_in_a_credentials_folder_named_through_the_mcp_path_is_passed_over(tree: Path):
    skipped: Counter[str] = Counter()
    assert discover([tree / ".ssh" / "notes.md"], skipped, within=[tree]) == []
    assert skipped["credentials: .ssh/"] == 1


def test_a_glob_on_the_command_line_passes_over_credentials_too(app: Path):
    found = discover([app / "app" / "*.json"])
    assert [s.path.name for s in found] == ["package.json"]


@pytest.mark.parametrize("name", PLATFORM_CREDENTIALS)
def test_each_platform_credential_named_through_the_mcp_path_is_passed_over(
    tmp_path: Path, name: str
):
    credential = tmp_path / name
    credential.parent.mkdir(parents=True, exist_ok=True)
    credential.write_text("key\n")
    skipped: Counter[str] = Counter()
    assert discover([credential], skipped, within=[tmp_path]) == []
    assert skipped == {f"credentials: {credential.name}": 1}


@pytest.mark.parametrize("name", PLATFORM_CREDENTIALS)
def test_each_platform_credential_is_passed_over_by_a_walk_and_counted(tmp_path: Path, name: str):
    credential = tmp_path / name
    credential.parent.mkdir(parents=True, exist_ok=True)
    credential.write_text("key\n")
    skipped: Counter[str] = Counter()
    assert list(walk_directory(tmp_path, skipped)) == []
    assert skipped == {f"credentials: {credential.name}": 1}


def test_a_person_naming_a_credential_is_warned(tree: Path):
    assert named_credentials([tree / "secrets.yaml", tree / "deploy" / "README.md"]) == [
        f"{tree / 'secrets.yaml'} (credentials: secrets.yaml)"
    ]


# -- by content, where files are read --------------------------------------------------


def read_content(*names: str, within: list[Path] | None = None) -> ReadResult:
    files = [CONTENT / name for name in names] if names else [CONTENT]
    return read_all(discover(files, within=within or []), Defaults())


@pytest.mark.parametrize(
    ("name", "found"),
    [
        ("aws.json", "AWS access key"),
        ("deploy_key.md", "private key"),
        ("server_key.txt", "private key"),
        ("Secrets.xcconfig", "key assignment"),
    ],
)
def test_a_file_holding_a_key_is_passed_over_by_its_content(name: str, found: str):
    result = read_content(within=[CONTENT])
    assert name not in {Path(d.origin).name for d in result.documents}
    assert result.skipped[f"credentials: {name} ({found})"] == 1


def test_an_xcconfig_of_build_settings_and_key_references_is_read():
    result = read_content(within=[CONTENT])
    assert "Build.xcconfig" in {Path(d.origin).name for d in result.documents}


def test_the_placeholder_key_of_aws_documentation_is_no_credential():
    result = read_content(within=[CONTENT])
    assert "notes.md" in {Path(d.origin).name for d in result.documents}


def test_a_jsonl_record_holding_a_key_is_passed_over_and_the_others_read():
    result = read_content("records.jsonl", within=[CONTENT])
    assert [d.doc_id for d in result.documents] == ["r1", "r3"]
    assert result.skipped == {"credentials: records.jsonl (AWS access key)": 1}


def test_a_file_holding_a_key_that_a_person_names_is_read_as_asked():
    result = read_content("aws.json")
    assert [Path(d.origin).name for d in result.documents] == ["aws.json"]


def test_opting_in_reads_files_holding_keys():
    result = read_all(discover([CONTENT], secrets=True), Defaults())
    assert "aws.json" in {Path(d.origin).name for d in result.documents}
    assert not result.skipped
