from __future__ import annotations

import os
import shutil
import tempfile

import pytest

from chunkers.config import ChunkConfig
from core.tokens import TokenCounter, counter_for_model
from tests.support.models import default_model_dir

# Tests write only under temporary directories: the models exported to ONNX too (the
# user's cache otherwise, Settings.model_cache_dir). One export serves the whole session and
# the processes it starts, which inherit the variable. A command run outside the clone
# writes its indexes into the user data folder, and every command reads the user's config
# file: both are the session's own too.
_CACHE = tempfile.mkdtemp(prefix="rag-test-cache-")
os.environ["XDG_CACHE_HOME"] = _CACHE
os.environ["XDG_DATA_HOME"] = os.path.join(_CACHE, "data-home")
os.environ["XDG_CONFIG_HOME"] = os.path.join(_CACHE, "config-home")
# Under pytest-xdist (make test-fast) each worker starts its own Prefect API server: one
# database between them would be locked by the other's writes.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ["PREFECT_HOME"] = os.path.join(_CACHE, "prefect-home")


@pytest.fixture(scope="session")
def counter() -> TokenCounter:
    """The real tokenizer of the packaged default embedding model."""
    return counter_for_model(default_model_dir())


@pytest.fixture
def cfg(counter: TokenCounter) -> ChunkConfig:
    return ChunkConfig(counter=counter)


@pytest.fixture
def small_cfg(counter: TokenCounter) -> ChunkConfig:
    """Tight limits so that small fixtures exercise the splitting paths."""
    return ChunkConfig(counter=counter, target_tokens=60, max_tokens=80, overlap_tokens=10)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--refresh-screenshots",
        action="store_true",
        help="write the Prefect UI screenshots into docs/ (default: a temporary directory)",
    )


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Remove the session's cache. Stop Prefect's ephemeral API servers while pytest's
    streams are still open; left to Prefect's atexit hook, their goodbye log line hits a
    closed stream and prints a 'Logging error' traceback after every run."""
    shutil.rmtree(_CACHE, ignore_errors=True)
    try:
        from prefect.logging.handlers import APILogWorker
        from prefect.server.api.server import SubprocessASGIServer
    except ImportError:
        return
    # Logs still queued for the API go first, or they are sent to a stopped server.
    APILogWorker.drain_all(timeout=10)
    for server in list(SubprocessASGIServer._instances.values()):
        server.stop()
