"""What every group of settings shares: which config files may set a field, the types and
defaults several groups use, and the context from_env reads the sources through (the data
folder's default depends on the directory it runs from)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import JsonValue

from core.config_files import ConfigFile, Sources, default_data_dir

# Which config files may set a setting (core/config_files.py says why), one per field.
ANY_FILE: dict[str, JsonValue] = {"sources": Sources.PROJECT.value}
USER_FILE: dict[str, JsonValue] = {"sources": Sources.USER.value}
NO_FILE: dict[str, JsonValue] = {"sources": Sources.ENVIRONMENT.value}


# Where a vector phase runs (loaders/executors/).
VectorExecutor = Literal["local", "dask", "endpoints"]


class SettingsError(ValueError):
    """A setting has a value that cannot be used; the message names the variable."""


# Fetched into the user's cache on first use (core/embedding/model_files.py).
DEFAULT_EMBEDDING_MODEL = "sentence-transformers/all-MiniLM-L6-v2"


def user_cache_dir() -> Path:
    """$XDG_CACHE_HOME, else ~/.cache: where Hugging Face and pip keep theirs too."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")


@dataclass(frozen=True)
class ActiveSources:
    """What from_env reads below its arguments: the environment, then the config files
    (the project's first). `origins` says where each setting came from, for messages."""

    environ: Mapping[str, str]
    cwd: Path
    files: tuple[ConfigFile, ...]
    origins: dict[str, str]


# Unset means Settings(...) is defaults plus its arguments.
ACTIVE_SOURCES: ContextVar[ActiveSources | None] = ContextVar("rag_settings_sources", default=None)


def data_dir_default() -> Path:
    """The default data folder, seen from from_env's directory."""
    sources = ACTIVE_SOURCES.get()
    return default_data_dir(sources.cwd if sources else None)
