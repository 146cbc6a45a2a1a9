"""The tree reads as the data flow: the import contracts of .importlinter hold (flows →
loaders | query → chunkers → core → sql; the query side never imports ingestion)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from tests.support.paths import ROOT


def test_the_import_layers_hold():
    lint_imports = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    assert lint_imports, "import-linter is a dev dependency: pip install -e '.[dev]'"

    run = subprocess.run(
        [lint_imports, "--config", str(ROOT / ".importlinter")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )

    assert run.returncode == 0, run.stdout[-3000:]
    assert "Contracts: 2 kept, 0 broken." in run.stdout
