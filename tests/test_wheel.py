"""The wheel built from the clone carries every file the installed command reads: each module,
the SQL of each dialect with its migrations, the tree-sitter queries, and the OpenClaw skill."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

from tests.support.clone import clone_files, copy_clone
from tests.support.paths import ROOT

PACKAGES = ("core", "chunkers", "loaders", "query", "flows", "sql", "rag_retrieve")
# The build backend comes from the package index, as `pip install` of a clone gets it.
pytestmark = pytest.mark.slow

SKILL = Path("skills/rag-retrieve/SKILL.md")
# Where the wheel's data scheme puts the skill: the environment's share/ folder.
SKILL_IN_WHEEL = "rag_retrieve-0.1.0.data/data/share/rag-retrieve/skills/rag-retrieve/SKILL.md"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    base = tmp_path_factory.mktemp("wheel")
    clone = copy_clone(base / "rag-retrieve")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps"]
        + ["--wheel-dir", str(base / "dist"), str(clone)],
        check=True,
        timeout=600,
    )
    [built] = (base / "dist").glob("rag_retrieve-*.whl")
    with zipfile.ZipFile(built) as archive:
        yield archive


def test_every_file_of_the_packages_is_in_the_wheel(wheel):
    names = set(wheel.namelist())
    expected = [f.as_posix() for f in clone_files() if f.parts[0] in PACKAGES]
    assert any(name.endswith(".sql") and "/migrations/" in name for name in expected)
    assert any(name.endswith(".scm") for name in expected)
    missing = sorted(name for name in expected if name not in names)
    assert not missing, f"the wheel lacks {missing}: add them to pyproject's package-data"


def test_the_skill_is_in_the_wheel_as_it_is_in_the_clone(wheel):
    assert SKILL in clone_files()
    assert wheel.read(SKILL_IN_WHEEL) == (ROOT / SKILL).read_bytes()


def test_mlx_is_required_on_apple_silicon_only(wheel):
    [metadata] = [n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")]
    requires = Parser().parsestr(wheel.read(metadata).decode()).get_all("Requires-Dist")
    # Apart from the dev extra's CPU build on Linux, for the MLX runtime's tests.
    mlx = [
        r
        for r in requires
        if r.split(">")[0].split(";")[0].strip().startswith("mlx") and "extra ==" not in r
    ]
    assert len(mlx) == 1
    assert all('sys_platform == "darwin"' in r and 'platform_machine == "arm64"' in r for r in mlx)
