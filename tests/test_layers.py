"""The tree reads as the data flow: the import contracts of .importlinter hold (flows →
loaders | query → chunkers → core → sql; the query side never imports ingestion; inside the
query side, cli → mcp | serve | eval → retrieval → types | errors; the query side takes the
framework lexicon from core, not from the chunkers' tagging)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import ROOT

PACKAGES = ("rag_retrieve", "core", "chunkers", "loaders", "query", "flows", "sql")


def lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    program = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    assert program, "import-linter is a dev dependency: pip install -e '.[dev]'"
    return subprocess.run(
        [program, "--config", str(root / ".importlinter"), "--no-cache"],
        cwd=root,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"},
    )


def copy_of_the_tree(tmp_path: Path) -> Path:
    for package in PACKAGES:
        shutil.copytree(ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("*.pyc"))
    shutil.copy(ROOT / ".importlinter", tmp_path / ".importlinter")
    return tmp_path


def test_the_import_layers_hold():
    run = lint_imports(ROOT)
    assert run.returncode == 0, run.stdout[-3000:]
    assert "Contracts: 4 kept, 0 broken." in run.stdout


def test_an_upward_import_breaks_the_layers(tmp_path):
    root = copy_of_the_tree(tmp_path)
    (root / "core" / "upward.py").write_text("import loaders.ingest  # noqa: F401\n")

    run = lint_imports(root)

    assert run.returncode != 0
    assert "Layers follow the data flow BROKEN" in run.stdout
    assert "core.upward -> loaders.ingest" in run.stdout


def test_the_query_side_importing_ingestion_breaks_its_contract(tmp_path):
    root = copy_of_the_tree(tmp_path)
    (root / "query" / "sneaky.py").write_text("import loaders.stages  # noqa: F401\n")

    run = lint_imports(root)

    assert run.returncode != 0
    assert "The query side never imports ingestion BROKEN" in run.stdout


@pytest.mark.parametrize(
    ("module", "source"),
    [
        ("query/retrieval/sneaky.py", "import query.mcp.server  # noqa: F401\n"),
        ("query/serve/sneaky.py", "import query.cli.render  # noqa: F401\n"),
        ("query/stray.py", "X = 1\n"),  # a module of query/ that belongs to no concern
    ],
)
def test_a_breach_of_the_query_concerns_breaks_their_contract(tmp_path, module, source):
    root = copy_of_the_tree(tmp_path)
    (root / module).write_text(source)

    run = lint_imports(root)

    assert run.returncode != 0
    assert "The query side is layered by concern BROKEN" in run.stdout


def test_query_expansion_importing_the_tagging_lexicon_breaks_its_contract(tmp_path):
    root = copy_of_the_tree(tmp_path)
    (root / "query" / "retrieval" / "expansion" / "sneaky.py").write_text(
        "import chunkers.tagging.tags  # noqa: F401\n"
    )

    run = lint_imports(root)

    assert run.returncode != 0
    assert "The query side takes the framework lexicon from core BROKEN" in run.stdout
