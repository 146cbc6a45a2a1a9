"""The MCP `ingest` tool reads the ingest CLI's JSON lines, not its stderr: run through an
interpreter that rewords every line the CLI writes to stderr, the tool still returns the
right summary, rejects and error message. Only when the child fails other than on its
arguments does the tail of its stderr reach the error. A TiDB password goes to the child in
its environment, never in its argv, and never into the tool's result."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import anyio
import pytest
from mcp.server.mcpserver.exceptions import ToolError

from query.mcp.ingest import (
    PASSWORD_VARIABLE,
    IngestResult,
    embed_command,
    ingest_command,
    run_ingest_cli,
)
from query.mcp.watch import Watcher
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


# -- a TiDB password stays in the server; a failing child's stderr reaches the error -------

STORE_URL = "tidb://rag:hunter2@db.internal:4000/rag"
# Stands in for the interpreter: keeps its argv and the password it was given in RECORD,
# writes STDERR_LINES lines to stderr, then the summary on stdout (or nothing, with FAIL).
STAND_IN = """#!{python}
import json, os, sys
with open({record!r}, "w") as out:
    json.dump({{"argv": sys.argv, "password": os.environ.get("TIDB_PASSWORD")}}, out)
for n in range({lines}):
    print(f"stderr line {{n}}", file=sys.stderr)
print("Traceback: connecting to tidb://rag:hunter2@db.internal:4000/rag", file=sys.stderr)
print("ValueError: stand-in failure", file=sys.stderr)
if {fail}:
    sys.exit(1)
print(json.dumps({{"kind": "summary", "docs_seen": 0}}))
"""


def stand_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, fail: bool, lines: int = 0):
    record = tmp_path / "child.json"
    script = tmp_path / "python-stand-in"
    script.write_text(
        STAND_IN.format(python=sys.executable, record=str(record), lines=lines, fail=fail)
    )
    script.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(script))
    monkeypatch.delenv("TIDB_PASSWORD", raising=False)
    return record


def test_the_childs_argv_holds_no_password_and_its_environment_does(tmp_path, monkeypatch):
    record = stand_in(tmp_path, monkeypatch, fail=False)

    anyio.run(run_ingest_cli, [str(tmp_path)], "default", STORE_URL)

    child = json.loads(record.read_text())
    assert not any("hunter2" in arg for arg in child["argv"])
    assert "tidb://rag@db.internal:4000/rag" in child["argv"]
    assert child["password"] == "hunter2"


def test_the_ingest_result_shows_the_store_without_its_password(tmp_path, monkeypatch):
    stand_in(tmp_path, monkeypatch, fail=False)

    result = anyio.run(run_ingest_cli, [str(tmp_path)], "default", STORE_URL)

    assert "hunter2" not in result.model_dump_json()
    assert result.store == "tidb://rag:***@db.internal:4000/rag"


def test_the_watch_childs_argv_holds_no_password():
    watcher = Watcher.for_index(["src"], "default", STORE_URL, _no_run, print)
    assert not any("hunter2" in arg for arg in watcher.command)
    assert watcher.env is not None and watcher.env["TIDB_PASSWORD"] == "hunter2"


async def _no_run() -> None:
    return None


def test_a_failing_childs_stderr_tail_reaches_the_error_without_the_password(tmp_path, monkeypatch):
    stand_in(tmp_path, monkeypatch, fail=True, lines=500)

    with pytest.raises(ToolError) as failed:
        anyio.run(run_ingest_cli, [str(tmp_path)], "default", STORE_URL)

    message = str(failed.value)
    assert message.startswith("python -m flows.ingest exited with status 1")
    assert "ValueError: stand-in failure" in message
    assert "stderr line 499" in message and "stderr line 0\n" not in message  # the tail only
    assert "hunter2" not in message


def test_the_tool_asks_for_keyword_first_and_embeds_in_a_second_child(tmp_path, monkeypatch):
    store = "tidb://rag:s3cret@db.example:4000/rag"
    first = ingest_command(["code"], "app", store, vectors_later=True)
    second = embed_command("app", store)
    assert first.argv[first.argv.index("--vectors") + 1] == "later"
    assert second.argv[second.argv.index("-m") + 1 :] == [
        "flows.embed",
        "--index",
        "app",
        "--store",
        "tidb://rag@db.example:4000/rag",
        "--lock",
        "--json",
    ]
    assert not any("s3cret" in arg for arg in second.argv)
    assert second.env is not None and second.env[PASSWORD_VARIABLE] == "s3cret"
