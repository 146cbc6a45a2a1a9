"""Credentials an ingest never reads unless the user opts in (RAG_INGEST_SECRETS).

An index is searched by agents, and an agent can be steered by text inside an indexed
document ("index ~/.ssh for context"): a key or a token that reaches an index can be
retrieved and repeated. So an ingest passes over the folders that hold credentials and the
files named like them, even where their type would be read (`.docker/config.json`,
`credentials.json`, `secrets.yaml`), and the files whose content holds a private key or a
cloud access key whatever their name (`secret_content`), and counts each in the run
summary's skipped files with the reason. A file a person names on the command line is read
as asked (with a warning); one the MCP `ingest` tool names is not (chunkers/sources/paths.py).
"""

from __future__ import annotations

import fnmatch
import re
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
    "*.p8",  # App Store Connect's AuthKey_*.p8 among them
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
    # Mobile platforms: Firebase's app configuration (API keys), signing profiles; cargo's
    # registry token (.cargo/credentials.toml, or `credentials` before cargo 1.46).
    "googleservice-info.plist",
    "google-services.json",
    "*.mobileprovision",
    "*.provisionprofile",
    "credentials",
    "credentials.toml",
)
# What gives a credential away inside a file, whatever its name: a private key in PEM or
# OpenSSH form, an AWS access key id (AWS's documented placeholder, ...EXAMPLE, excepted).
_PRIVATE_KEY = re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")
_PRIVATE_KEY_BLOCK = re.compile(
    r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END [A-Z0-9 ]+-----|\Z)",
    re.DOTALL,
)
_ACCESS_KEY = re.compile(
    r"(?<![A-Z0-9])(?:AKIA|ASIA)(?![0-9A-Z]{9}EXAMPLE)[0-9A-Z]{16}(?![A-Z0-9])"
)
# An xcconfig is where an iOS project injects its keys (`API_KEY = abc123`); it also holds
# the build settings worth indexing, so only one that assigns a literal to a key-like name
# is passed over. `$(OTHER)` (a reference) and an empty value are no key.
_KEY_ASSIGNMENT = re.compile(
    r"^[ \t]*[A-Za-z0-9_]*(?:API_?KEY|SECRET|TOKEN|PASSWORD|PRIVATE_KEY|CLIENT_KEY)[A-Za-z0-9_]*"
    r"[ \t]*(?:\[[^\]\n]*\][ \t]*)*=[ \t]*(?!\$[({])[^\s/]",
    re.MULTILINE | re.IGNORECASE,
)
REASON = "credentials"


def secret_dir(path: Path) -> bool:
    """Whether the folder `path` holds credentials."""
    return path.name in SECRET_DIRS or (path.parent.name, path.name) in SECRET_NESTED_DIRS


def secret_file(path: Path) -> bool:
    """Whether the file `path` is named like a key, a token or an environment file."""
    name = path.name.lower()
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in SECRET_FILES)


def named_secret(path: Path, *, is_dir: bool = False) -> str | None:
    """How a file (`is_dir`: a folder) named by its path, not found by a walk (which judges
    each folder on its way down), counts as a credential: by its own name, or by a folder it
    lies in (`.ssh/notes.md`); None when it is neither."""
    if secret_dir(path) if is_dir else secret_file(path):
        return skipped_label(path, is_dir=is_dir)
    folder = next((p for p in path.absolute().parents if secret_dir(p)), None)
    return None if folder is None else skipped_label(folder, is_dir=True)


def secret_content(text: str, kind: str | None = None) -> str | None:
    """What in `text` is a credential ("private key", "AWS access key", and for an xcconfig
    file (`kind`) "key assignment"), or None: a screen of the text, cheap enough for every
    file an ingest reads."""
    if _PRIVATE_KEY.search(text):
        return "private key"
    if _ACCESS_KEY.search(text):
        return "AWS access key"
    if kind == "xcconfig" and _KEY_ASSIGNMENT.search(text):
        return "key assignment"
    return None


def redacted(text: str) -> str:
    """`text` with the private keys and access keys `secret_content` finds blanked out: for
    output (a child's stderr) that leaves the process."""
    return _ACCESS_KEY.sub("[redacted]", _PRIVATE_KEY_BLOCK.sub("[redacted]", text))


def skipped_label(path: Path, *, is_dir: bool, found: str | None = None) -> str:
    """How a passed-over credential counts in the run summary's skipped files; `found`:
    what its content gave away."""
    if is_dir:
        return f"{REASON}: {path.name}/"
    return f"{REASON}: {path.name}" + (f" ({found})" if found else "")
