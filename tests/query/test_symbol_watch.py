"""References kept exact by `--watch` across a git branch switch: the watcher (in process, a
fake model) follows a repository of the Swift navigation fixtures, and after each checkout
`python -m query symbol` lists the uses of the branch checked out, no more, no fewer."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from query.cli.main import main
from tests.support.navigation import NAVIGATION
from tests.support.watching import Watcher, watching

SETTLE_S = 120.0  # a checkout's changes may arrive as more than one run on a busy box
# On the branch `feature`, Canvas stops measuring shapes and a new file does.
GALLERY = """struct Gallery {
    func largest(_ shapes: [Shape]) -> Int {
        return shapes.map { $0.area() }.max() ?? 0
    }
}
"""


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """main: the fixtures; feature: Canvas.swift without its call of area(), Gallery.swift
    with one; main checked out."""
    root = tmp_path / "repo"
    shutil.copytree(NAVIGATION / "swift", root)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "main")
    git(root, "checkout", "-q", "-b", "feature")
    canvas = root / "Canvas.swift"
    canvas.write_text(canvas.read_text().replace("            _ = shape.area()\n", ""))
    (root / "Gallery.swift").write_text(GALLERY)
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "feature")
    git(root, "checkout", "-q", "main")
    return root


def uses_of(store: Path, name: str, capsys) -> list[tuple[str, int]]:
    main(["symbol", name, "--store", str(store), "--json"])
    result = json.loads(capsys.readouterr().out)
    return sorted((r["path"], r["line"]) for r in result["references"])


def settled(watcher: Watcher, store: Path, capsys, expected: list[tuple[str, int]]) -> list:
    """The uses of area() once a run leaves them as `expected`, or after SETTLE_S."""
    deadline = time.monotonic() + SETTLE_S
    found = uses_of(store, "area", capsys)
    while found != expected and time.monotonic() < deadline:
        run = watcher.next_run(timeout=max(1.0, deadline - time.monotonic()))
        assert run.error is None, run.error
        found = uses_of(store, "area", capsys)
    return found


def test_references_follow_a_branch_switch_and_back(repo: Path, tmp_path: Path, capsys):
    store = tmp_path / "store"
    on_main = [("Canvas.swift", 7)]
    on_feature = [("Gallery.swift", 3)]
    with watching(repo, tmp_path, store=store) as watcher:
        watcher.next_run()
        assert uses_of(store, "area", capsys) == on_main
        git(repo, "checkout", "-q", "feature")
        assert settled(watcher, store, capsys, on_feature) == on_feature
        git(repo, "checkout", "-q", "main")
        assert settled(watcher, store, capsys, on_main) == on_main
        watcher.close()
