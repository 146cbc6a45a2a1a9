"""The default embedding model's files, as the resolver finds them (the `[torch]` extra's
wheel in a dev install, else the user cache, fetched on first use like a user's)."""

from __future__ import annotations

from functools import lru_cache

from core.embedding.model_files import model_dir
from core.settings import Settings


@lru_cache(maxsize=1)
def default_model_dir() -> str:
    return str(model_dir(Settings()))
