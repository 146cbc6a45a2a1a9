"""Reading corpora: what is accepted, what is rejected, and what is skipped."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from chunkers.sources.discovery import SourceError, discover, walk_directory, walked
from chunkers.sources.reading import Defaults, read_all
from tests.support import paths

FIXTURES = paths.FIXTURES / "sources"


@pytest.fixture
def mixed():
    return read_all(discover([FIXTURES / "mixed.jsonl"]), Defaults())


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    shutil.copytree(FIXTURES / "tree", root)
    (root / ".git").mkdir()
    (root / ".git" / "hook.py").write_text("x = 1\n")
    return root


def rejected_lines(result) -> dict[int, str]:
    return {r.line: r.reason for r in result.rejects}


def test_good_records_survive_bad_neighbours(mixed):
    assert [d.doc_id for d in mixed.documents] == ["doc-1", "doc-6", "doc-10", "chat-13", "doc-15"]


def test_each_bad_record_is_rejected_with_its_line(mixed):
    assert sorted(rejected_lines(mixed)) == [2, 3, 4, 5, 7, 8, 9, 11, 12, 14]


@pytest.mark.parametrize(
    ("line", "reason_part", "field"),
    [
        (2, "malformed JSON", None),
        (3, "missing or empty text", "text"),
        (4, "missing or empty text", "text"),
        (5, "must be a list of strings", "frameworks"),
        (7, "not a version", "ios_version_min"),
        (8, "ISO date", "last_verified"),
        (9, "expected a JSON object", None),
        (11, "duplicate id 'doc-1'", "id"),
        (12, "unknown domain 'cooking'", "domain"),
        (14, "invalid UTF-8", None),
    ],
)
def test_reject_names_reason_and_field(mixed, line, reason_part, field):
    reject = next(r for r in mixed.rejects if r.line == line)
    assert reason_part in reject.reason
    assert reject.field == field
    assert reject.file.endswith("mixed.jsonl")


def test_unknown_fields_are_kept_as_metadata(mixed):
    doc = next(d for d in mixed.documents if d.doc_id == "doc-6")
    assert doc.metadata == {"extra_field": "kept", "rating": 5}


def test_content_is_accepted_in_place_of_text(mixed):
    doc = next(d for d in mixed.documents if d.doc_id == "doc-10")
    assert doc.text == "Uses content instead of text."
    assert doc.source == "blog"


def test_chat_session_is_read_from_messages(mixed):
    doc = next(d for d in mixed.documents if d.doc_id == "chat-13")
    assert doc.language == "chat"
    assert doc.messages and doc.messages[0]["role"] == "user"


def test_content_hash_is_sha256_and_covers_fields_as_well_as_text(tmp_path: Path):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(
        '{"id": "a", "text": "same"}\n{"id": "b", "text": "same", "ios_version_min": "17.0"}\n'
    )
    first, second = read_all(discover([corpus]), Defaults()).documents
    assert len(first.content_hash) == 64 and int(first.content_hash, 16) >= 0
    assert first.content_hash != second.content_hash


def test_plain_file_hash_is_sha256_of_its_text(tree: Path):
    import hashlib

    doc = next(d for d in read_all(discover([tree]), Defaults()).documents if d.language == "swift")
    assert doc.content_hash == hashlib.sha256(doc.text.encode()).hexdigest()


def test_oversized_record_is_rejected(tmp_path: Path):
    corpus = tmp_path / "big.jsonl"
    corpus.write_text('{"id": "a", "text": "' + "x" * 500 + '"}\n{"id": "b", "text": "small"}\n')
    result = read_all(discover([corpus]), Defaults(max_document_bytes=200))
    assert [d.doc_id for d in result.documents] == ["b"]
    assert "exceeds the limit of 200" in result.rejects[0].reason


def test_directory_walk_skips_tooling_build_and_gitignored_files(tree: Path):
    found = sorted(p.relative_to(tree).as_posix() for p in walk_directory(tree))
    assert found == [
        "App/Sources/ContentView.swift",
        "docs/notes.md",
        "docs/readme.txt",
        "scripts/blob.py",
        "scripts/latin1.py",
        "scripts/tool.py",
    ]


def test_walked_answers_for_each_path_as_the_walk_does(tree: Path):
    every_file = [Path(d) / name for d, _, names in os.walk(tree) for name in names]
    walk = set(walk_directory(tree))

    assert {path for path in every_file if walked(tree, path)} == walk
    assert not walked(tree, tree.parent / "elsewhere.swift")


def test_walked_answers_for_deleted_files_and_folders(tree: Path):
    shutil.rmtree(tree / "ignored-dir")
    (tree / "docs" / "notes.md").unlink()

    assert walked(tree, tree / "docs" / "notes.md")
    assert not walked(tree, tree / "ignored-dir" / "Hidden.swift")
    assert not walked(tree, tree / "ignored-dir", is_dir=True)
    assert not walked(tree, tree / "App" / ".build", is_dir=True)
    assert walked(tree, tree / "App" / "Sources", is_dir=True)
    assert not walked(tree, tree / "docs" / "nested.md")  # docs/.gitignore


def test_plain_files_get_source_and_path_ids(tree: Path):
    result = read_all(discover([tree]), Defaults())
    ids = {d.doc_id for d in result.documents}
    assert "user_codebase:App/Sources/ContentView.swift" in ids
    swift = next(d for d in result.documents if d.path == "App/Sources/ContentView.swift")
    assert (swift.language, swift.domain) == ("swift", "ios")


def test_binary_and_non_utf8_files_are_rejected(tree: Path):
    result = read_all(discover([tree]), Defaults())
    reasons = {Path(r.file).name: r.reason for r in result.rejects}
    assert reasons["blob.py"].startswith("binary file")
    assert reasons["latin1.py"].startswith("invalid UTF-8")


def test_unreadable_file_is_rejected_not_fatal(tree: Path):
    # A dangling link cannot be read even by root, unlike a mode-000 file.
    (tree / "scripts" / "gone.py").symlink_to(tree / "scripts" / "missing-target.py")
    result = read_all(discover([tree]), Defaults())
    reject = next(r for r in result.rejects if r.file.endswith("gone.py"))
    assert reject.reason.startswith("cannot read file")
    assert any(d.path == "scripts/tool.py" for d in result.documents)


def test_glob_expands_recursively(tree: Path):
    files = discover([str(tree / "**" / "*.md")])
    assert [f.path.name for f in files] == ["nested.md", "notes.md"]


def test_missing_path_is_a_usage_error(tmp_path: Path):
    with pytest.raises(SourceError, match="no such file"):
        discover([tmp_path / "nope"])


def test_cli_defaults_apply_only_where_records_are_silent(tmp_path: Path):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"id": "a", "text": "t"}\n{"id": "b", "text": "t", "domain": "web"}\n')
    result = read_all(discover([corpus]), Defaults(source="blog", domain="python"))
    assert [(d.source, d.domain) for d in result.documents] == [("blog", "python"), ("blog", "web")]
