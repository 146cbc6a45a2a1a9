"""A confined ingest (the MCP tool's, `--within ROOT`) reads only files whose real path lies
inside a root: a link inside a root that leads out of it (to a file or a folder) is passed
over and counted as `outside root`, and the check is made again where a file is read, so a
file swapped for such a link after it was found is refused."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from chunkers.sources.discovery import discover
from chunkers.sources.paths import OUTSIDE
from chunkers.sources.reading import Defaults, read_all


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """An allowed root with one file of its own, next to a private folder outside it."""
    root = tmp_path / "project"
    (root / "Sources").mkdir(parents=True)
    (root / "Sources" / "App.swift").write_text("struct App {}\n")
    private = tmp_path / "private"
    private.mkdir()
    (private / "diary.md").write_text("# Private\n\nNot for any index.\n")
    return root


def private_file(root: Path) -> Path:
    return root.parent / "private" / "diary.md"


def names(found) -> list[str]:
    return sorted(s.path.name for s in found)


def test_a_linked_file_that_leaves_the_root_is_passed_over_and_counted(root: Path):
    (root / "Sources" / "notes.md").symlink_to(private_file(root))
    skipped: Counter[str] = Counter()
    assert names(discover([root], skipped, within=[root])) == ["App.swift"]
    assert skipped[OUTSIDE] == 1


def test_a_linked_folder_that_leaves_the_root_is_passed_over_and_counted(root: Path):
    (root / "Sources" / "vendor").symlink_to(root.parent / "private", target_is_directory=True)
    skipped: Counter[str] = Counter()
    assert names(discover([root], skipped, within=[root])) == ["App.swift"]
    assert skipped[OUTSIDE] == 1


def test_a_folder_walked_from_the_command_line_is_a_root_of_its_own(root: Path):
    # `rag-retrieve ingest .` in a cloned repository: its links lead nowhere outside it.
    (root / "Sources" / "notes.md").symlink_to(private_file(root))
    skipped: Counter[str] = Counter()
    found = discover([root], skipped)
    assert names(found) == ["App.swift"]
    assert skipped[OUTSIDE] == 1
    assert found[0].within == (root.resolve(),)  # and checked again where it is read


def test_a_glob_match_through_a_linked_folder_is_passed_over_and_counted(root: Path):
    (root / "vendor").symlink_to(root.parent / "private", target_is_directory=True)
    skipped: Counter[str] = Counter()
    assert discover([root / "*" / "*.md"], skipped, within=[root]) == []
    assert skipped[OUTSIDE] == 1


def test_a_link_that_stays_inside_the_root_is_read(root: Path):
    (root / "App-link.swift").symlink_to(root / "Sources" / "App.swift")
    found = discover([root / "App-link.swift"], within=[root])
    assert names(found) == ["App-link.swift"]


def test_a_file_swapped_for_a_link_after_it_was_found_is_refused_where_it_is_read(root: Path):
    swapped = root / "Sources" / "Notes.md"
    swapped.write_text("# Notes\n")
    found = discover([root], within=[root])
    swapped.unlink()
    swapped.symlink_to(private_file(root))

    result = read_all(found, Defaults())
    assert [d.title for d in result.documents] == ["App.swift"]
    assert result.skipped == {OUTSIDE: 1}
    assert not result.rejects


def test_without_roots_a_link_named_by_its_path_is_read_as_named(root: Path):
    (root / "Sources" / "notes.md").symlink_to(private_file(root))
    assert names(discover([root / "Sources" / "notes.md"])) == ["notes.md"]
