"""The client the CLI calls a worker with (`remote_answer`), against a stand-in worker: what
the CLI sees for each way the worker answers or fails."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from query.errors import UsageError
from query.serve.client import WorkerUnavailable, remote_answer
from query.types import QueryRequest
from tests.support.fake_services import Reply, serving
from tests.support.paths import ROOT


def worker(reply: Reply):
    return serving({"/retrieve": lambda request: reply})


def test_the_request_is_posted_as_json_and_the_answer_returned():
    with worker(Reply(body={"chunks": [], "notes": []})) as server:
        answered = remote_answer(server.url + "/", QueryRequest(query="q", frameworks=("SwiftUI",)))
    assert answered == {"chunks": [], "notes": []}
    (received,) = server.received
    assert received.path == "/retrieve"
    assert received.body["query"] == "q" and received.body["frameworks"] == ["SwiftUI"]


def test_a_400_is_the_callers_usage_error_with_the_whole_message():
    """The worker's own validation speaks: its message is relayed, however long."""
    message = "unknown index 'nope' (known: " + ", ".join(f"i{n}" for n in range(100)) + ")"
    with worker(Reply(400, {"error": message})) as server, pytest.raises(UsageError) as info:
        remote_answer(server.url, {"query": "q"})
    assert str(info.value) == message


def test_any_other_error_status_makes_the_worker_unavailable_with_its_reason():
    with (
        worker(Reply(503, {"error": "busy: 128 requests in progress"})) as server,
        pytest.raises(WorkerUnavailable) as info,
    ):
        remote_answer(server.url, {"query": "q"})
    assert str(info.value) == f"worker {server.url} answered 503: busy: 128 requests in progress"


def test_a_worker_that_is_not_running_is_unavailable():
    with serving({}) as server:
        url = server.url
    with pytest.raises(WorkerUnavailable, match=f"worker {url} unreachable"):
        remote_answer(url, {"query": "q"})


def test_a_worker_slower_than_the_timeout_is_unavailable():
    with (
        worker(Reply(body={}, delay_s=2.0)) as server,
        pytest.raises(WorkerUnavailable, match="unreachable: no reply within 0.3s"),
    ):
        remote_answer(server.url, {"query": "q"}, timeout=0.3)


@pytest.mark.parametrize("body", [b"<html>proxy</html>", [1, 2]])
def test_a_reply_that_is_not_a_json_object_is_unavailable(body):
    with worker(Reply(body=body)) as server, pytest.raises(WorkerUnavailable):
        remote_answer(server.url, {"query": "q"})


# What a cold `python -m query` imports when a worker answers: the process's start is the
# latency the user waits for, so none of what answering in-process needs.
HEAVY = (
    "numpy",
    "torch",
    "onnxruntime",
    "transformers",
    "sentence_transformers",
    "tokenizers",
    "pyarrow",
    "prefect",
    "fastapi",
    "uvicorn",
    "httpx",
    "sqlite3",
    "pymysql",
    # The store's code; not StoreLocation (core.store.location, .errors, .tidb.dsn: about
    # 10 ms, no driver), which is how the CLI checks --store.
    "core.store.contract",
    "core.store.open",
    "core.store.sqlite",
    "core.store.tidb.conn",
    "core.store.tidb.store",
    "core.embedding",
    "query.retrieval.engine",
    "query.retrieval.pipeline",
    "query.serve.worker",
)
# Runs the CLI as `python -m query` would; reports its exit code and what it imported.
PROBE = """
import json, runpy, sys
heavy = json.loads(sys.argv[2])
sys.argv = ["query", *json.loads(sys.argv[1])]
try:
    runpy.run_module("query", run_name="__main__", alter_sys=True)
    code = 0
except SystemExit as exc:
    code = exc.code
found = sorted(h for h in heavy if any(m == h or m.startswith(h + ".") for m in sys.modules))
print(json.dumps({"code": code, "imported": found}), file=sys.stderr)
"""


def test_a_call_a_worker_answers_imports_nothing_heavy(tmp_path):
    answer = {"chunks": [{"chunk_id": "c1", "content": "x", "score": 1.0}], "notes": []}
    with worker(Reply(body=answer)) as server:
        run = subprocess.run(
            [
                sys.executable,
                "-c",
                PROBE,
                json.dumps(["q", "--store", str(tmp_path), "--worker", server.url, "--json"]),
                json.dumps(HEAVY),
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
    report = json.loads(run.stderr.strip().splitlines()[-1])
    assert report == {"code": 0, "imported": []}
    assert json.loads(run.stdout) == answer  # the worker's answer, not one made here
