"""`rag-retrieve`: one command that hands each subcommand to the module entry point users
already know, with that module's flags, output and exit codes."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rag_retrieve.cli import main
from tests.support.navigation import NAVIGATION, ingest_into
from tests.support.paths import ROOT


def test_help_lists_every_subcommand(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for sub in ("ask", "ingest", "status", "doctor", "serve", "mcp", "symbol", "eval", "--version"):
        assert f"rag-retrieve {sub}" in out


def test_no_arguments_is_a_usage_error(capsys):
    assert main([]) == 2
    assert "usage: rag-retrieve" in capsys.readouterr().err


def test_the_version_is_the_packages(capsys):
    from importlib.metadata import version

    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"rag-retrieve {version('rag-retrieve')}"


def test_status_is_python_m_query_status(tmp_path: Path, capsys):
    assert main(["status", "--store", str(tmp_path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["indexes"] == {}


def test_symbol_is_python_m_query_symbol(tmp_path: Path, capsys):
    store = ingest_into(tmp_path, NAVIGATION / "typescript")
    assert main(["symbol", "register", "--store", str(store), "--json"]) == 0
    uses = json.loads(capsys.readouterr().out)["references"]
    calls = [(u["path"], u["line"], u.get("resolved")) for u in uses if u["use"] == "call"]
    assert calls == [("loader.ts", 6, "registry.ts:5")]


def test_a_question_keeps_the_query_exit_codes(tmp_path: Path, capsys):
    assert main(["q", "--store", str(tmp_path / "missing")]) == 2
    assert "no store directory" in capsys.readouterr().err


def test_ask_takes_a_question_that_names_a_subcommand(tmp_path: Path, capsys):
    # An empty store: the question is asked (exit 1: nothing found), not run as `status`.
    assert main(["ask", "status", "--store", str(tmp_path), "--mode", "bm25"]) == 1
    assert "index(es)" not in capsys.readouterr().out


def test_ingest_is_python_m_flows_ingest(tmp_path: Path, capsys):
    assert main(["ingest", str(tmp_path / "nothing"), "--store", str(tmp_path)]) == 2
    assert "no such file or directory" in capsys.readouterr().err


def test_eval_is_python_m_query_eval(tmp_path: Path, capsys):
    assert main(["eval", str(tmp_path / "nothing")]) == 2


@pytest.mark.skipif(
    not shutil.which("rag-retrieve", path=str(Path(sys.executable).parent)),
    reason="the console script appears with `pip install` (make install)",
)
def test_the_installed_command_runs_from_any_directory(tmp_path: Path):
    program = shutil.which("rag-retrieve", path=str(Path(sys.executable).parent))
    done = subprocess.run(
        [program, "status", "--store", str(tmp_path), "--json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["store"] == str(tmp_path)
