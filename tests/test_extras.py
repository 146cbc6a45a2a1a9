"""Every extra an install hint names is one pyproject.toml declares, and `make test` takes them."""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HINT = re.compile(r"rag-retrieve\[([a-z,]+)\]")


def _declared() -> dict[str, list[str]]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return project["optional-dependencies"]


def _tracked_text_files() -> list[Path]:
    names = subprocess.run(
        ["git", "ls-files", "*.py", "*.md", "*.toml", "Makefile"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return [ROOT / name for name in names]


def test_every_extra_an_install_hint_names_is_declared() -> None:
    declared = _declared()
    named = {
        (path.relative_to(ROOT).as_posix(), extra)
        for path in _tracked_text_files()
        for match in HINT.finditer(path.read_text(errors="replace"))
        for extra in match.group(1).split(",")
    }
    assert named, "no install hint found: the pattern no longer matches the tree"
    missing = sorted((where, extra) for where, extra in named if extra not in declared)
    assert missing == []


def test_the_test_install_takes_the_tidb_and_dask_extras() -> None:
    # The TiDB tests import polars and the scale-out tests prefect-dask: a CI install without
    # them fails at collection (as it once did when the tidb extra was named but not declared).
    makefile = (ROOT / "Makefile").read_text()
    installed = re.search(r'pip install --quiet (?:--no-compile )?-e "\.\[([a-z,]+)\]"', makefile)
    assert installed is not None
    extras = set(installed.group(1).split(","))
    declared = _declared()
    expanded = set(extras)
    for extra in extras:
        for requirement in declared[extra]:
            inner = re.match(r"rag-retrieve\[([a-z,]+)\]", requirement)
            if inner:
                expanded |= set(inner.group(1).split(","))
    assert {"tidb", "dask", "torch"} <= expanded
    assert any(r.startswith("polars") for r in declared["tidb"])
