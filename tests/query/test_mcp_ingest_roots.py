"""The ingest tool's confinement: a path (every match of a glob) must resolve inside a root
the user allowed, symlinks and `..` followed; a root may not open the whole home folder. The
ingest child is given the roots and checks again, and reads no credential, named or globbed."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from mcp.server.mcpserver.exceptions import ToolError

from chunkers.sources.paths import OUTSIDE
from flows.ingest import build_parser
from loaders.stages import discover_stage
from query.errors import UsageError
from query.mcp.ingest import ingest_command
from query.mcp.ingest_roots import confined, ingest_roots


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "home" / "src" / "app"
    (root / "Sources").mkdir(parents=True)
    (root / "Sources" / "App.swift").write_text("struct App {}\n")
    outside = tmp_path / "home" / ".aws"
    outside.mkdir()
    (outside / "credentials.md").write_text("secret\n")
    return root, outside


def test_a_path_inside_a_root_is_taken_as_an_absolute_path(layout):
    root, _ = layout
    assert confined([str(root / "Sources")], (root,)) == [str(root / "Sources")]


def test_a_path_outside_every_root_is_refused_naming_the_roots(layout):
    root, outside = layout
    with pytest.raises(ToolError, match=str(root)):
        confined([str(outside)], (root,))


def test_dot_dot_that_leaves_a_root_is_refused(layout):
    root, _ = layout
    with pytest.raises(ToolError, match="outside the folders"):
        confined([str(root / ".." / ".." / ".aws")], (root,))


def test_a_symlink_that_leaves_a_root_is_refused(layout):
    root, outside = layout
    (root / "link").symlink_to(outside, target_is_directory=True)
    with pytest.raises(ToolError, match="outside the folders"):
        confined([str(root / "link")], (root,))


def test_a_glob_is_refused_when_one_match_leaves_a_root(layout):
    root, outside = layout
    (root / "link").symlink_to(outside, target_is_directory=True)
    with pytest.raises(ToolError, match="matching"):
        confined([str(root / "*" / "*.md")], (root,))


def test_roots_are_resolved_and_must_be_folders(layout, tmp_path):
    root, _ = layout
    assert ingest_roots([str(root / "Sources" / "..")], home=tmp_path / "home") == (root,)
    with pytest.raises(UsageError, match="not a directory"):
        ingest_roots([str(root / "Sources" / "App.swift")], home=tmp_path / "home")


@pytest.mark.parametrize("above", [".", "..", "/"])
def test_a_root_that_holds_the_home_folder_is_refused(tmp_path: Path, above: str):
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    given = "/" if above == "/" else str(home / above)
    with pytest.raises(UsageError, match="whole home folder"):
        ingest_roots([given], home=home)


# -- the child checks again: the roots go with it (`--within`) --------------------------


def child_discovers(paths: list[str], roots: tuple[Path, ...], skipped: Counter[str]) -> list:
    """What the ingest child the tool starts would read: its argv parsed by the ingest CLI,
    its discover stage run on the paths and roots it was given."""
    argv = ingest_command(confined(paths, roots), "default", "store", within=roots).argv
    args = build_parser().parse_args(argv[argv.index("flows.ingest") + 1 :])
    sources, counts = discover_stage(args.paths, False, tuple(args.within))
    skipped.update(counts)
    return sources


@pytest.fixture
def app(layout) -> Path:
    root, _ = layout
    (root / "app").mkdir()
    (root / "app" / "package.json").write_text('{"name": "app"}\n')
    (root / "app" / "credentials.json").write_text('{"client_secret": "s3cr3t"}\n')
    return root


@pytest.mark.parametrize("named", ["app/*.json", "app/credentials.json"])
def test_credentials_globbed_or_named_through_the_tool_are_not_read(app: Path, named: str):
    skipped: Counter[str] = Counter()
    sources = child_discovers([str(app / named)], (app,), skipped)
    assert "credentials.json" not in {s.path.name for s in sources}
    assert skipped["credentials: credentials.json"] == 1


def test_a_file_swapped_for_a_link_after_the_servers_check_is_refused_by_the_child(layout):
    root, outside = layout
    swapped = root / "Sources" / "Notes.md"
    swapped.write_text("# Notes\n")
    argv = ingest_command(confined([str(swapped)], (root,)), "default", "store", within=(root,))
    swapped.unlink()
    swapped.symlink_to(outside / "credentials.md")

    args = build_parser().parse_args(argv.argv[argv.argv.index("flows.ingest") + 1 :])
    sources, skipped = discover_stage(args.paths, False, tuple(args.within))
    assert sources == []
    assert skipped == {OUTSIDE: 1}
