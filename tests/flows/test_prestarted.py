"""`python -m flows.prestarted`: a process that imported the ingest stack before its command
was known runs the one command it is then handed, as `python -m MODULE` would, and counts the
command's phases from that moment, not from its own start."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from core.own_command import python_module
from tests.support.ops import rag_env, shared_server
from tests.support.paths import ROOT

GUIDES = ROOT / "data" / "sample" / "guides"


def prestarted(env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        python_module("flows.prestarted"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def test_a_request_for_a_command_it_does_not_run_is_refused_with_status_2():
    process = prestarted()
    out, err = process.communicate(json.dumps({"module": "os", "argv": []}) + "\n", timeout=120)

    assert process.returncode == 2
    assert "module must be one of flows.ingest, flows.embed, not 'os'" in err
    assert out == ""


def test_a_request_that_is_not_json_is_refused_with_status_2():
    process = prestarted()
    _, err = process.communicate("flows.ingest --help\n", timeout=120)

    assert process.returncode == 2
    assert "request is not JSON" in err


def test_end_of_file_before_a_request_ends_it_quietly():
    process = prestarted()
    out, err = process.communicate("", timeout=120)

    assert (process.returncode, out, err) == (0, "", "")


def test_the_command_it_is_handed_runs_as_its_module_would():
    process = prestarted()
    request = {"module": "flows.ingest", "argv": ["--help"]}
    out, _ = process.communicate(json.dumps(request) + "\n", timeout=120)

    cold = subprocess.run(
        python_module("flows.ingest", "--help"), capture_output=True, text=True, timeout=120
    )
    assert process.returncode == cold.returncode == 0
    assert out == cold.stdout


@pytest.mark.slow
def test_an_ingest_it_is_handed_counts_its_phases_from_the_request(pytestconfig, tmp_path: Path):
    env = {**os.environ, **shared_server(pytestconfig).env(), **rag_env(tmp_path)}
    process = prestarted(env)
    idle = 8.0  # the process waits this long for its command, imports done or not
    time.sleep(idle)
    argv = [str(GUIDES), "--index", "guides", "--store", str(tmp_path / "store")]
    request = {"module": "flows.ingest", "argv": [*argv, "--vectors", "later", "--lock", "--json"]}
    out, err = process.communicate(json.dumps(request) + "\n", timeout=300)

    assert process.returncode == 0, err
    summary = json.loads(out.splitlines()[-1])
    assert (summary["kind"], summary["docs_new"], summary["chunks_pending"]) == (
        "summary",
        3,
        summary["chunks_written"],
    )
    assert summary["phases"]["startup"] < idle  # the wait before the request is not counted
