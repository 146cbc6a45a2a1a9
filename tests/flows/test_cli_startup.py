"""The flows' command lines answer `--help` and refuse bad arguments without importing
Prefect, torch or the ingest stack (seconds on a loaded laptop): what was imported is read
from the process itself, not from a clock."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import FIXTURES, ROOT

DIRS = ("DATA", "INDEX", "STAGING")

HEAVY = ("prefect", "torch", "transformers", "sentence_transformers", "numpy", "pyarrow")
# Runs the module as `python -m` would and reports its exit code and the heavy imports.
PROBE = """
import json, runpy, sys
sys.argv = [sys.argv[0], *json.loads(sys.argv[1])]
try:
    runpy.run_module({module!r}, run_name="__main__")
    code = 0
except SystemExit as exc:
    code = exc.code
heavy = sorted({{m.split(".")[0] for m in sys.modules}} & set({heavy!r}))
print(json.dumps({{"code": code, "heavy": heavy}}), file=sys.stderr)
"""


# The embedding runtimes: a model being loaded imports one of them.
RUNTIMES = ("onnxruntime", "torch", "mlx", "transformers", "sentence_transformers")


def probe(
    module: str, *args: str, heavy: tuple[str, ...] = HEAVY, env: dict[str, str] | None = None
) -> tuple[int, list[str], str]:
    run = subprocess.run(
        [sys.executable, "-c", PROBE.format(module=module, heavy=heavy), json.dumps(args)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    report = json.loads(run.stderr.strip().splitlines()[-1])
    return report["code"], report["heavy"], run.stdout


@pytest.mark.parametrize("module", ["flows.ingest", "flows.serve"])
def test_help_imports_nothing_heavy(module: str):
    code, heavy, out = probe(module, "--help")

    assert code == 0
    assert f"usage: python -m {module}" in out
    assert heavy == []


def test_ingest_help_lists_every_option():
    _, _, out = probe("flows.ingest", "--help")

    for option in ("--index", "--store", "--domain", "--source", "--force", "--json"):
        assert option in out


@pytest.mark.parametrize(
    ("module", "args"),
    [
        ("flows.ingest", ()),
        ("flows.ingest", ("x", "--no-such-flag")),
        ("flows.serve", ("--limit", "x")),
    ],
)
def test_argument_errors_exit_2_without_importing_anything_heavy(
    module: str, args: tuple[str, ...]
):
    code, heavy, _ = probe(module, *args)

    assert code == 2
    assert heavy == []


def test_a_path_that_names_nothing_is_refused_before_prefect_or_torch(tmp_path: Path):
    missing = tmp_path / "no-such-corpus"

    code, heavy, _ = probe("flows.ingest", str(missing), "--store", str(tmp_path / "store"))

    assert code == 2
    assert "prefect" not in heavy and "torch" not in heavy
    assert not (tmp_path / "store").exists()


def test_watch_refuses_a_file_before_prefect_or_torch(tmp_path: Path):
    corpus = tmp_path / "Notes.md"
    corpus.write_text("# Notes\n\nA note.\n")

    code, heavy, _ = probe(
        "flows.ingest", str(corpus), "--watch", "--store", str(tmp_path / "store")
    )

    assert code == 2
    assert "prefect" not in heavy and "torch" not in heavy


def test_an_ingest_with_vectors_later_loads_no_model(tmp_path: Path):
    env = {**os.environ, **{f"RAG_{v}_DIR": str(tmp_path / v.lower()) for v in DIRS}}

    code, runtimes, out = probe(
        "flows.ingest", str(FIXTURES / "wwdc"), "--store", str(tmp_path / "store"),
        "--vectors", "later", "--json", heavy=RUNTIMES, env=env,
    )  # fmt: skip

    summary = json.loads(out.strip().splitlines()[-1])
    assert code == 0
    assert summary["chunks_written"] > 0 and summary["chunks_embedded"] == 0
    assert runtimes == []
