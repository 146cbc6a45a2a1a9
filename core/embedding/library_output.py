"""What the model libraries print while a model loads: kept off stderr unless asked for.

transformers draws a `Loading weights` progress bar and logs warnings about checkpoint keys
on every model load; in a command's output they read as noise (or as errors), and in an
agent's captured stderr they cost tokens. `Settings.library_logs` (`RAG_LIBRARY_LOGS`, the
ingest's `--verbose`) lets them through for debugging a model.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def library_output(enabled: bool) -> Iterator[None]:
    """With `enabled` False: transformers' (and the Hugging Face hub's) progress bars off and
    their logs at ERROR for the block, the previous state restored after it."""
    hf_logging = None if enabled else _transformers_logging()
    if hf_logging is None:
        yield
        return
    verbosity, bars = hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()


def _transformers_logging() -> Any:
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:  # the HTTP runtime needs no transformers; nothing to quieten
        return None
    return hf_logging
