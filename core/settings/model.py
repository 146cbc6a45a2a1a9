"""The settings object itself: every group's fields in one frozen model, and how from_env
layers its sources (defaults, the user's config file, the project's, the environment, flags),
refuses what a file may not set and names the variable of a wrong value."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import PrivateAttr, ValidationError
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    InitSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from core.config_files import (
    ConfigFile,
    ConfigFileError,
    Sources,
    project_config_file,
    read_config_file,
    untrusted,
    user_config_file,
)
from core.settings.common import ACTIVE_SOURCES, ActiveSources, SettingsError
from core.settings.embedding import EmbeddingSettings
from core.settings.ingest import IngestSettings
from core.settings.query import QuerySettings
from core.settings.tidb import TidbSettings

_LOG = logging.getLogger("rag.settings")


class _MappingEnvSource(EnvSettingsSource):
    """pydantic-settings' environment source over a given mapping instead of os.environ, so
    that from_env(environ) reads exactly what the caller passed."""

    def __init__(self, settings_cls: type[BaseSettings], environ: Mapping[str, str]) -> None:
        self._environ = environ
        super().__init__(settings_cls, case_sensitive=True, env_ignore_empty=True)

    def _load_env_vars(self) -> Mapping[str, str | None]:
        return _documented(self._environ)


def _documented(environ: Mapping[str, str]) -> dict[str, str]:
    # Only the documented names (populate_by_name would also let `tidb_port` in), matched
    # case-sensitively; an empty value counts as unset, as a shell user expects.
    return {k: v for k, v in environ.items() if k in _FIELD_OF_VAR and v != ""}


# The groups are listed last to first: pydantic takes fields from the bases in reverse order,
# so the fields (and the configuration reference, docs/configuration.md) read ingestion,
# embedding, query, TiDB.
class Settings(TidbSettings, QuerySettings, EmbeddingSettings, IngestSettings):
    model_config = SettingsConfigDict(frozen=True, populate_by_name=True, extra="forbid")

    # Setting name -> where its value came from, when another source than the default set
    # it (from_env; `python -m query doctor` lists them).
    _origins: dict[str, str] = PrivateAttr(default_factory=dict)

    def __init__(self, **values: Any) -> None:
        try:
            super().__init__(**values)
        except ValidationError as exc:
            sources = ACTIVE_SOURCES.get()
            raise SettingsError(_describe(exc, sources.origins if sources else {})) from None

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # Settings(...) is defaults plus its arguments: a library caller or a test never gets
        # a stray variable of the process. Only from_env adds the environment and the config
        # files, below them.
        sources = ACTIVE_SOURCES.get()
        if sources is None:
            return (init_settings,)
        files = [InitSettingsSource(settings_cls, dict(f.values)) for f in sources.files]
        return (init_settings, _MappingEnvSource(settings_cls, sources.environ), *files)

    @classmethod
    def from_env(
        cls, environ: Mapping[str, str] | None = None, *, cwd: Path | None = None, **overrides: Any
    ) -> Settings:
        """Defaults, then the user's config file, the project's (the nearest
        `.rag-retrieve.toml` at or above `cwd`), environment variables, and explicit
        overrides (CLI flags) last."""
        environ = os.environ if environ is None else environ
        given = {k: v for k, v in overrides.items() if v is not None}
        files = _config_files(environ, cwd or Path.cwd())
        # Every source of each setting, the one that wins first.
        layers: dict[str, list[str]] = {name: ["command line"] for name in given}
        for var in _documented(environ):
            layers.setdefault(_FIELD_OF_VAR[var], []).append(f"environment variable {var}")
        for config in files:
            for name in config.values:
                layers.setdefault(name, []).append(str(config.path))
        origins = {
            name: found[0] + (f" (over {', '.join(found[1:])})" if found[1:] else "")
            for name, found in layers.items()
        }
        token = ACTIVE_SOURCES.set(ActiveSources(environ, cwd or Path.cwd(), files, origins))
        try:
            settings = cls(**given)
        finally:
            ACTIVE_SOURCES.reset(token)
        settings._origins.update(origins)
        return settings

    def origins(self) -> dict[str, str]:
        """Setting name -> the source that set it (a flag, a variable or a file), for each
        setting from_env did not leave at its default."""
        return dict(self._origins)

    def with_(self, **changes: Any) -> Settings:
        """A copy with `changes` (None values ignored), validated like the original."""
        values = self.model_dump()
        changed = {k: v for k, v in changes.items() if v is not None}
        values.update(changed)
        copy = type(self)(**values)
        copy._origins.update(self._origins | dict.fromkeys(changed, "command line"))
        return copy


# Setting name -> environment variable. The brief's names (TIDB_HOST, EMBEDDING_ENDPOINT, ...)
# are kept as users already export them; project-only knobs carry a RAG_ prefix.
ENV_VARS: dict[str, str] = {
    name: str(field.validation_alias) for name, field in Settings.model_fields.items()
}
_FIELD_OF_VAR: dict[str, str] = {var: name for name, var in ENV_VARS.items()}
# A config file's keys: a setting's name or its environment variable.
_CONFIG_KEYS: dict[str, str] = {**{name: name for name in ENV_VARS}, **_FIELD_OF_VAR}
_PATH_FIELDS = frozenset(
    name for name, field in Settings.model_fields.items() if field.annotation is Path
)


def _declared_sources(name: str) -> Sources:
    extra = Settings.model_fields[name].json_schema_extra
    declared = extra.get("sources") if isinstance(extra, dict) else None
    if not isinstance(declared, str):
        raise TypeError(f"{name}: declare its sources (json_schema_extra=ANY_FILE, ...)")
    return Sources(declared)


# Setting name -> which config files may set it.
SOURCES: dict[str, Sources] = {name: _declared_sources(name) for name in Settings.model_fields}


def _config_files(environ: Mapping[str, str], cwd: Path) -> tuple[ConfigFile, ...]:
    """The project's config file, then the user's (each only if it exists and is the
    user's own). A file setting what it may not is an error naming the key and the file."""
    project, user = project_config_file(cwd), user_config_file(environ)
    user_text = f"your user config file {user}" if user else "your user config file"
    elsewhere = {
        Sources.USER: "only you may set it, not a project (it can send data elsewhere, read "
        "credentials, move where data is kept or open a server): set {var} in the "
        "environment or {name} in " + user_text,
        Sources.ENVIRONMENT: "it is a test hook: set the environment variable {var}",
    }
    files = []
    for path, allowed in ((project, {Sources.PROJECT}), (user, {Sources.PROJECT, Sources.USER})):
        if path is None or not path.is_file():
            continue
        reason = untrusted(path)
        if reason is not None:
            _LOG.warning("warning: ignoring config file %s: %s", path, reason)
            continue
        refused = {
            name: elsewhere[sources].format(var=ENV_VARS[name], name=name)
            for name, sources in SOURCES.items()
            if sources not in allowed
        }
        try:
            files.append(read_config_file(path, _CONFIG_KEYS, _PATH_FIELDS, refused))
        except ConfigFileError as exc:
            raise SettingsError(str(exc)) from None
    return tuple(files)


def _describe(exc: ValidationError, origins: Mapping[str, str]) -> str:
    """One line per wrong setting, named by its environment variable (and by the file or
    flag that set it, when not the environment)."""
    lines = []
    for error in exc.errors():
        loc = error.get("loc") or ()
        name = str(loc[0]) if loc else ""
        name = _FIELD_OF_VAR.get(name, name)  # the location is the alias when one was used
        var = ENV_VARS.get(name, name)
        message = str(error.get("msg", "invalid")).removeprefix("Value error, ")
        origin = origins.get(name, "")
        where = f" (from {origin})" if origin and not origin.startswith("environment") else ""
        if not var:
            lines.append(message)
        else:
            lines.append(f"{var}={error.get('input')!r}{where}: {message}")
    return "; ".join(lines)
