"""A copy of the clone's files as they are in the working tree (tracked and untracked, not
ignored), for the tests that build or install it: the build writes its build/ and egg-info
there, not into the clone."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from tests.support.paths import ROOT


def clone_files() -> list[Path]:
    """The clone's files, relative to its root."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout
    return [Path(name) for name in listed.decode().split("\0") if name]


def copy_clone(target: Path) -> Path:
    for relative in clone_files():
        source = ROOT / relative
        if source.is_file():
            (target / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / relative)
    return target
