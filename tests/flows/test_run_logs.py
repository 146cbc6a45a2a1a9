"""The ingest's stages log through module loggers under `rag`; importing the flows names
`rag` in Prefect's extra-loggers setting, so those lines reach the run's log in Prefect
(its API log handler), beside any loggers the user named there."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.support.paths import ROOT

PROBE = """
import json, logging
import flows.ingest_flow  # imports Prefect after the flows package has named its loggers
from prefect.logging.handlers import APILogHandler

def forwarded(name):
    return any(isinstance(h, APILogHandler) for h in logging.getLogger(name).handlers)

print(json.dumps({
    "rag": forwarded("rag"),
    "mine": forwarded("mine"),
    "level": logging.getLogger("rag.progress").getEffectiveLevel(),
}))
"""


def probe(extra_loggers: str | None) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_LOGGING_EXTRA_LOGGERS"}
    if extra_loggers is not None:
        env["PREFECT_LOGGING_EXTRA_LOGGERS"] = extra_loggers
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_stage_loggers_are_forwarded_to_prefect_run_logs_at_info():
    found = probe(None)
    assert found["rag"] is True
    assert found["level"] == 20  # INFO: the progress lines (count, rate, ETA)


def test_the_users_own_extra_loggers_are_kept():
    found = probe("mine")
    assert found == {"rag": True, "mine": True, "level": 20}
