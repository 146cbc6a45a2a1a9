"""One typed settings object for the whole project.

This is the only package that reads the process environment, through pydantic-settings: each
field names its environment variable (`validation_alias`) and says what it means
(`description`), so the configuration reference (docs/configuration.md, written by
`python -m core.settings_reference`) and `ENV_VARS` below come from one declaration. Config
files (core/config_files.py) hold settings too, below the environment; each field also
declares which files may set it (its `json_schema_extra`: a project's file, the user's only,
or none), which the loader enforces and the reference shows. Everything else receives a
`Settings` (or the single values it needs) from its caller.

The fields are declared by stage, one module each (ingest.py, embedding.py, query.py,
tidb.py), and gathered into the one `Settings` of model.py, which also loads them.
"""

from core.settings.common import (
    DEFAULT_EMBEDDING_MODEL,
    SettingsError,
    VectorExecutor,
    user_cache_dir,
)
from core.settings.model import ENV_VARS, SOURCES, Settings

__all__ = [
    "DEFAULT_EMBEDDING_MODEL",
    "ENV_VARS",
    "SOURCES",
    "Settings",
    "SettingsError",
    "VectorExecutor",
    "user_cache_dir",
]
