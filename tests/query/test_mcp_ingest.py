"""The MCP `ingest` tool reads the ingest CLI's JSON lines, never its stderr: run through an
interpreter that rewords every line the CLI writes to stderr, the tool still returns the
right summary, rejects and error message."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import anyio
import pytest
from mcp.server.mcpserver.exceptions import ToolError

from query.mcp.ingest import IngestResult, run_ingest_cli
from tests.support.ops import shared_server
from tests.support.paths import FIXTURES

# Runs the real interpreter with the same arguments; each stderr line comes out reworded, so
# that no `rejected: ` or `error: ` prefix, nor any message text, survives.
REWORDING = """#!{python}
import subprocess, sys
done = subprocess.run([{python!r}, *sys.argv[1:]], stderr=subprocess.PIPE)
for line in done.stderr.decode("utf-8", "replace").splitlines():
    print("the ingest said, in other words: " + line[::-1], file=sys.stderr)
sys.exit(done.returncode)
"""
# tests/fixtures/sources/mixed.jsonl: five good records, and these lines rejected.
MIXED_REJECTED_LINES = [2, 3, 4, 5, 7, 8, 9, 11, 12, 14]


@pytest.fixture
def reworded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The tool starts its child with sys.executable: here, the rewording interpreter; and
    the child's settings keep every path inside tmp_path."""
    wrapper = tmp_path / "python-reworded"
    wrapper.write_text(REWORDING.format(python=sys.executable))
    wrapper.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(wrapper))
    for var, sub in (("DATA", "data"), ("INDEX", "indexes"), ("STAGING", "staging")):
        monkeypatch.setenv(f"RAG_{var}_DIR", str(tmp_path / sub))


def ingest(paths: list[str], store: Path, index: str = "mcp-json") -> IngestResult:
    async def call() -> IngestResult:
        return await run_ingest_cli(paths, index, str(store))

    return anyio.run(call)


@pytest.mark.slow
def test_summary_and_rejects_come_through_with_stderr_reworded(
    reworded, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pytestconfig
):
    for name, value in shared_server(pytestconfig).env().items():  # --lock takes a slot there
        monkeypatch.setenv(name, value)
    corpus = tmp_path / "mixed.jsonl"
    shutil.copy(FIXTURES / "sources" / "mixed.jsonl", corpus)

    result = ingest([str(corpus)], tmp_path / "store")

    assert (result.summary["docs_new"], result.summary["docs_rejected"]) == (5, 10)
    assert result.breakdowns["chunks_by_language"] == {"markdown": 4, "chat": 1}
    assert len(result.rejected) == len(MIXED_REJECTED_LINES)
    assert sorted(int(r.split(":")[1]) for r in result.rejected) == MIXED_REJECTED_LINES
    assert f"{corpus}:2: malformed JSON" in result.rejected[0]


def test_the_error_message_comes_through_with_stderr_reworded(reworded, tmp_path: Path):
    missing = tmp_path / "no-such-corpus"

    with pytest.raises(ToolError) as refused:
        ingest([str(missing)], tmp_path / "store")

    assert str(refused.value) == f"{missing}: no such file or directory"


def test_an_argument_the_cli_refuses_comes_through_with_stderr_reworded(reworded, tmp_path: Path):
    # argparse takes an index name that starts with "-" for an option.
    with pytest.raises(ToolError) as refused:
        ingest([str(tmp_path)], tmp_path / "store", index="-x")

    assert str(refused.value) == "argument --index: expected one argument"
