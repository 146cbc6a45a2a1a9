"""Where the settings come from besides the environment: config files and the data folder.

Two TOML files hold settings, below the environment variables in precedence: the project's
`.rag-retrieve.toml` (in the current directory or its nearest ancestor that has one) above
the user's `$XDG_CONFIG_HOME/rag-retrieve/config.toml`. The user file sits under `~/.config`
on macOS too, where command-line tools keep theirs (platformdirs' macOS config folder is
Application Support, which users do not look in for a dotfile).

A project file comes with whatever repository the user cloned, and agent hosts start the
MCP server inside it: so it may set only what describes the project or changes ranking
(`Sources.PROJECT`). What sends data somewhere, reads credentials, moves where data is
kept or read, or opens a server comes from the user alone (`Sources.USER`: the environment,
flags, the user's file), and test hooks from the environment only (`Sources.ENVIRONMENT`).
A file that another user owns or could have written is no one's word: it is ignored.

Where data lives by default: inside the checkout this code runs from, its `data/` as always
(so `make run` and the tests keep their paths); anywhere else, the platform's user data folder,
so that `rag-retrieve` run from any project finds the same indexes.
"""

from __future__ import annotations

import difflib
import os
import stat
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from functools import lru_cache
from pathlib import Path
from typing import Any

APP = "rag-retrieve"
PROJECT_FILE = ".rag-retrieve.toml"
USER_FILE = "config.toml"


class ConfigFileError(ValueError):
    """A config file cannot be read, names a setting that does not exist, or sets one it may
    not; the message names the file (and the line, for TOML syntax)."""


class Sources(StrEnum):
    """Where a setting may come from besides flags and the environment, which always may;
    each setting declares one (core/settings/, the field's json_schema_extra)."""

    PROJECT = "project"  # any config file: it describes the project or only changes ranking
    USER = "user"  # the user's config file, never a project's
    ENVIRONMENT = "environment"  # no config file: a test hook


# What each kind of source may set, in the words of the reference (docs/configuration.md).
SOURCES_TEXT: dict[Sources, str] = {
    Sources.PROJECT: "project or user file",
    Sources.USER: "user file only",
    Sources.ENVIRONMENT: "environment only",
}


@dataclass(frozen=True)
class ConfigFile:
    """One config file's settings, keyed by setting name."""

    path: Path
    values: dict[str, Any] = field(default_factory=dict)


def user_config_file(environ: Mapping[str, str]) -> Path | None:
    """$XDG_CONFIG_HOME/rag-retrieve/config.toml, else ~/.config/...; None when `environ`
    names neither (a caller's own mapping without a home has no user file)."""
    if environ.get("XDG_CONFIG_HOME"):
        return Path(environ["XDG_CONFIG_HOME"]) / APP / USER_FILE
    if environ.get("HOME"):
        return Path(environ["HOME"]) / ".config" / APP / USER_FILE
    return None


def project_config_file(start: Path) -> Path | None:
    """The nearest `.rag-retrieve.toml` at or above `start`."""
    for directory in (start, *start.parents):
        candidate = directory / PROJECT_FILE
        if candidate.is_file():
            return candidate
    return None


def untrusted(path: Path) -> str | None:
    """Why `path` is not the user's own word (another user owns it, or the group or others
    may write it), else None."""
    try:
        status = path.stat()
    except OSError as exc:
        return exc.strerror or str(exc)
    if hasattr(os, "getuid") and status.st_uid != os.getuid():
        return f"owned by uid {status.st_uid}, not by you (uid {os.getuid()})"
    if status.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        mode = stat.S_IMODE(status.st_mode)
        return f"writable by others (mode {mode:04o}; chmod go-w {path})"
    return None


def read_config_file(
    path: Path,
    keys: Mapping[str, str],
    path_fields: Iterable[str],
    refused: Mapping[str, str] | None = None,
) -> ConfigFile:
    """The settings of one file. `keys` maps each accepted key (a setting's name or its
    environment variable) to the setting's name; values of `path_fields` are resolved
    against the file's directory, as a path written in a file means. `refused` maps each
    setting this file may not set to where it may be set instead."""
    try:
        with path.open("rb") as handle:
            document = tomllib.load(handle)
    except tomllib.TOMLDecodeError as exc:  # its message carries the line and column
        raise ConfigFileError(f"{path}: {exc}") from None
    except OSError as exc:
        raise ConfigFileError(f"{path}: {exc.strerror or exc}") from None
    paths = set(path_fields)
    values: dict[str, Any] = {}
    # Every refused key is named at once: a user fixing a cloned repository's file should
    # not learn of them one run at a time.
    refusals: list[str] = []
    for key, value in document.items():
        if isinstance(value, dict):
            raise ConfigFileError(
                f"{path}: {key!r} is a table; settings are plain top-level values "
                '(tidb_host = "...", not [tidb] host = "...")'
            )
        name = keys.get(key)
        if name is None:
            close = difflib.get_close_matches(key, list(keys), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigFileError(f"{path}: unknown setting {key!r}{hint}")
        if name in values:
            raise ConfigFileError(f"{path}: {key!r} sets {name} a second time")
        if refused and name in refused:
            refusals.append(f"{path}: {key!r} may not be set in this file: {refused[name]}")
            continue
        if name in paths and isinstance(value, str):
            value = str((path.parent / Path(value).expanduser()).resolve())
        values[name] = value
    if refusals:
        raise ConfigFileError("\n".join(refusals))
    return ConfigFile(path, values)


# The folder this code runs from: a checkout of this project (an editable install, `make
# run`), or site-packages for an installed copy.
OWN_FOLDER = Path(__file__).resolve().parents[1]


@lru_cache(maxsize=8)
def clone_root(cwd: Path) -> Path | None:
    """The checkout this code runs from, when `cwd` is at or below it. Only our own: any
    repository can hold a pyproject.toml that names this project, and one that counted would
    move every index, the embedding cache and the corpora file into a folder it controls."""
    pyproject = OWN_FOLDER / "pyproject.toml"
    try:
        name = tomllib.loads(pyproject.read_text()).get("project", {}).get("name")
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    if name != APP or not cwd.resolve().is_relative_to(OWN_FOLDER):
        return None
    return OWN_FOLDER


def default_data_dir(cwd: Path | None = None) -> Path:
    """`data` in a clone of this project (relative when the clone is the current
    directory, as it always was), else the user data folder."""
    here = cwd or Path.cwd()
    root = clone_root(here)
    if root is not None:
        return Path("data") if root == here.resolve() else root / "data"
    import platformdirs  # only outside a clone: the import costs a few ms of a cold start

    return platformdirs.user_data_path(APP, appauthor=False)
