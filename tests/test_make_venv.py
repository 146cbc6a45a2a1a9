"""The Makefile's Python: scripts/make_venv.sh takes the first Python >= 3.11 on PATH, and
with none it stops before creating .venv, naming what to install.

The interpreters are fakes on a PATH of their own: each answers the version question with its
version, and `-m venv DIR` makes DIR/bin/python a copy of itself and notes its name.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.paths import ROOT

SCRIPT = ROOT / "scripts" / "make_venv.sh"
INSTALL_HINTS = ("brew install python@3.12", "apt install python3.11", "uv python install 3.12")

FAKE_PYTHON = """#!/bin/sh
case "$1" in
    -c) echo {version} ;;
    -m) /bin/mkdir -p "$3/bin" && /bin/cp "$0" "$3/bin/python" && echo {name} > "$3/made_by" ;;
    *) exit 2 ;;
esac
"""
# What a pyenv shim of a version that is not selected does.
BROKEN_PYTHON = '#!/bin/sh\necho "pyenv: $(basename $0): command not found" >&2\nexit 127\n'


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(0o755)
    return path


@pytest.fixture
def bin_dir(tmp_path: Path) -> Path:
    """A PATH holding no Python: only the tools the script and make call."""
    directory = tmp_path / "bin"
    directory.mkdir()
    for tool in ("rm", "make", "sh"):
        (directory / tool).symlink_to(shutil.which(tool))
    return directory


def add_python(bin_dir: Path, name: str, version: str) -> Path:
    return _write(bin_dir / name, FAKE_PYTHON.format(version=version, name=name))


def make_venv(bin_dir: Path, venv: Path, *python: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["/bin/sh", str(SCRIPT), str(venv), *python],
        env={"PATH": str(bin_dir)},
        capture_output=True,
        text=True,
        timeout=60,
    )


def made_by(venv: Path) -> str:
    return (venv / "made_by").read_text().strip()


def test_with_python_3_9_only_it_stops_before_creating_the_venv(bin_dir, tmp_path):
    add_python(bin_dir, "python3", "3.9")
    add_python(bin_dir, "python3.9", "3.9")
    done = make_venv(bin_dir, tmp_path / ".venv")
    assert done.returncode != 0
    assert not (tmp_path / ".venv").exists()
    assert len(done.stderr.splitlines()) == 1
    assert "found only python3 3.9" in done.stderr
    assert all(hint in done.stderr for hint in INSTALL_HINTS)


def test_with_python_3_9_and_3_12_it_picks_3_12(bin_dir, tmp_path):
    add_python(bin_dir, "python3", "3.9")
    add_python(bin_dir, "python3.12", "3.12")
    done = make_venv(bin_dir, tmp_path / ".venv")
    assert done.returncode == 0, done.stderr
    assert made_by(tmp_path / ".venv") == "python3.12"


def test_python3_is_taken_when_it_is_new_enough(bin_dir, tmp_path):
    add_python(bin_dir, "python3", "3.14")
    assert make_venv(bin_dir, tmp_path / ".venv").returncode == 0
    assert made_by(tmp_path / ".venv") == "python3"


def test_an_interpreter_that_does_not_run_is_passed_over(bin_dir, tmp_path):
    _write(bin_dir / "python3.13", BROKEN_PYTHON)
    add_python(bin_dir, "python3.11", "3.11")
    assert make_venv(bin_dir, tmp_path / ".venv").returncode == 0
    assert made_by(tmp_path / ".venv") == "python3.11"


def test_a_named_python_is_used_even_with_a_newer_one_on_path(bin_dir, tmp_path):
    add_python(bin_dir, "python3.13", "3.13")
    (tmp_path / "elsewhere").mkdir()
    named = add_python(tmp_path / "elsewhere", "python3.11", "3.11")
    assert make_venv(bin_dir, tmp_path / ".venv", str(named)).returncode == 0
    assert made_by(tmp_path / ".venv") == "python3.11"


def test_a_named_python_that_is_too_old_stops_with_the_message(bin_dir, tmp_path):
    add_python(bin_dir, "python3.12", "3.12")
    named = add_python(bin_dir, "python3.10", "3.10")
    done = make_venv(bin_dir, tmp_path / ".venv", str(named))
    assert done.returncode != 0 and not (tmp_path / ".venv").exists()
    assert "uv python install 3.12" in done.stderr


def test_a_venv_left_by_an_older_python_is_replaced(bin_dir, tmp_path):
    add_python(bin_dir, "python3.9", "3.9")
    # What the Makefile before this script left behind: `python3 -m venv` of Apple's 3.9.
    subprocess.run([str(bin_dir / "python3.9"), "-m", "venv", str(tmp_path / ".venv")])
    add_python(bin_dir, "python3.12", "3.12")
    done = make_venv(bin_dir, tmp_path / ".venv")
    assert done.returncode == 0, done.stderr
    assert "made by Python 3.9; replacing it" in done.stderr
    assert made_by(tmp_path / ".venv") == "python3.12"


def test_a_venv_of_a_new_enough_python_is_kept(bin_dir, tmp_path):
    add_python(bin_dir, "python3.11", "3.11")
    assert make_venv(bin_dir, tmp_path / ".venv").returncode == 0
    add_python(bin_dir, "python3.13", "3.13")
    assert make_venv(bin_dir, tmp_path / ".venv").returncode == 0
    assert made_by(tmp_path / ".venv") == "python3.11"


def test_make_install_stops_with_the_message_and_no_venv(bin_dir, tmp_path):
    clone = tmp_path / "clone"
    (clone / "scripts").mkdir(parents=True)
    for name in ("Makefile", "pyproject.toml", "scripts/make_venv.sh"):
        shutil.copy2(ROOT / name, clone / name)
    add_python(bin_dir, "python3", "3.9")
    done = subprocess.run(
        [str(bin_dir / "make"), "-C", str(clone), "install"],
        env={"PATH": str(bin_dir)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0
    assert not (clone / ".venv").exists()
    assert "found only python3 3.9" in done.stderr and "brew install python@3.12" in done.stderr
