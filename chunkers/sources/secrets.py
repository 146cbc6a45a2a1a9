"""Credentials a directory ingest never reads unless the user opts in (RAG_INGEST_SECRETS).

An index is searched by agents, and an agent can be steered by text inside an indexed
document ("index ~/.ssh for context"): a key or a token that reaches an index can be
retrieved and repeated. So a directory walk passes over the folders that hold credentials
and the files named like them, even where their type would be read (`.docker/config.json`,
`credentials.json`, `secrets.yaml`), and counts each in the run summary's skipped files with
the reason. A file named on the command line is read as asked.
"""

from __future__ import annotations

import fnmatch
from pathlib import Path

# Folders of credentials, by name; and nested ones, by their last two names.
SECRET_DIRS = frozenset(
    {".ssh", ".aws", ".gnupg", ".azure", ".kube", ".docker", ".password-store", ".gcloud"}
)
SECRET_NESTED_DIRS = frozenset({(".config", "gcloud"), (".config", "gh")})
# File names (case-insensitive shell patterns) of keys, tokens and environment files.
SECRET_FILES = (
    ".env",
    ".env.*",
    "*.pem",
    "*.key",
    "*.p8",
    "*.p12",
    "*.pfx",
    "*.keystore",
    "*.jks",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    ".netrc",
    ".pgpass",
    ".npmrc",
    ".pypirc",
    "credentials*.json",
    "*service-account*.json",
    "secrets.json",
    "secrets.yaml",
    "secrets.yml",
    "secrets.toml",
    "*.tfvars",
)
REASON = "credentials"


def secret_dir(path: Path) -> bool:
    """Whether the folder `path` holds credentials."""
    return path.name in SECRET_DIRS or (path.parent.name, path.name) in SECRET_NESTED_DIRS


def secret_file(path: Path) -> bool:
    """Whether the file `path` is named like a key, a token or an environment file."""
    name = path.name.lower()
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in SECRET_FILES)


def skipped_label(path: Path, *, is_dir: bool) -> str:
    """How a passed-over credential counts in the run summary's skipped files."""
    return f"{REASON}: {path.name}/" if is_dir else f"{REASON}: {path.name}"
